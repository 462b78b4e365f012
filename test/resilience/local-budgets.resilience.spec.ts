import type { Redis } from 'ioredis';
import { startRedis, type TestRedis } from '../support/redis-server.js';
import { startResilientApp, watchUnhandledRejections, type ResilientApp } from './support/resilient-app.js';

const CLIENT = 'hot';
const WINDOW_US = 3_600_000_000;

// A hot key's units taken ahead are spent through a stall, with no store call; once they run out, the failure policy
// decides; and the takes that Redis ran after their deadline count nothing: once the stall is over and the units held
// are given back, Redis counts exactly the requests it admitted, locally or not.
describe('local budgets while Redis is stalled by SIGSTOP', () => {
  let redis: TestRedis;
  let admin: Redis;
  let rl: ResilientApp;
  let rejections: ReturnType<typeof watchUnhandledRejections>;

  beforeAll(async () => {
    rejections = watchUnhandledRejections();
    redis = await startRedis({ own: true });
    admin = redis.client();
    rl = await startResilientApp(redis, {
      failurePolicy: 'closed',
      timeoutMs: 50,
      defaultRule: { limit: 100_000, window: '1h', algorithm: 'fixed-window', key: 'header:x-client', localBudget: { maxUnits: 30, maxMs: '1m' } },
    });
  });
  afterAll(async () => {
    await rl?.close();
    admin?.disconnect();
    await redis?.stop();
    rejections?.dispose();
  });

  it('spends what it holds, then the failure policy decides, and Redis counts only what it admitted', async () => {
    for (let i = 0; i < 20; i++) expect((await rl.get(CLIENT)).status).toBe(200);
    await rl.service.budgets!.settled();

    redis.process!.kill('SIGSTOP');
    const during: number[] = [];
    try {
      while (during.length < 200 && !during.includes(429)) during.push((await rl.get(CLIENT)).status);
    } finally {
      redis.process!.kill('SIGCONT');
    }
    await rl.ping();
    // The units held went on being spent without Redis; then the failure policy ('closed') refused.
    expect(during.filter((s) => s === 200).length).toBeGreaterThan(0);
    expect(during.at(-1)).toBe(429);
    const refused = rl.events.filter((e) => !e.result.allowed);
    expect(refused.length).toBeGreaterThan(0);
    expect(refused.every((e) => e.result.decisions[0].degraded === 'closed')).toBe(true);

    rl.service.budgets!.clear();
    await rl.service.budgets!.settled();
    const value = Number(await admin.get(rl.stateKey(CLIENT)));
    expect(value % WINDOW_US).toBe(rl.admittedOnRedis(CLIENT));
    expect(rejections.seen).toEqual([]);
  });
});
