import type { Redis } from 'ioredis';
import { cpuWaitMs } from '../support/cpu-wait.js';
import { startRedis, type TestRedis } from '../support/redis-server.js';
import {
  APP_CLIENTS,
  killRedis,
  maxLatency,
  pendingAt,
  startResilientApp,
  Traffic,
  waitFor,
  watchUnhandledRejections,
  type Answer,
  type AppClient,
  type ResilientApp,
} from './support/resilient-app.js';

const TIMEOUT_MS = 50;
const MARGIN_MS = 150;

// A crash and a restart on the same port: the app reconnects by itself. The new server starts empty (no
// persistence), so whatever it holds was written after the restart and must match what the app decided on it.
describe.each<AppClient>(APP_CLIENTS)('Redis killed and restarted on the same port, the app on %s', (client) => {
  let redis: TestRedis;
  let admin: Redis;
  let rl: ResilientApp;
  let rejections: ReturnType<typeof watchUnhandledRejections>;
  let answers: Answer[];
  let resumedAfterMs: number;

  beforeAll(async () => {
    rejections = watchUnhandledRejections();
    redis = await startRedis({ own: true });
    // The module probes Redis as soon as a client says it reconnected ('ready'). GLIDE says nothing (it has no events):
    // Redis is found back by the circuit's next probe, so its open interval is kept short for GLIDE.
    const circuitBreaker = client === 'GLIDE' ? { minOpenMs: 100, maxOpenMs: 400 } : undefined;
    rl = await startResilientApp(redis, { failurePolicy: 'memory', timeoutMs: TIMEOUT_MS, circuitBreaker }, client);
    // 'pre' has requests in flight when Redis dies; a client that resent them after reconnecting would count them anew.
    const pre = new Traffic(() => rl.get('pre'), 4);
    await waitFor('10 decisions on Redis', () => rl.admittedOnRedis('pre') >= 10);
    const { signalledAt } = await killRedis(redis);
    const preAnswers = await pre.stop();
    const post = new Traffic(() => rl.get('post'), 2);
    await waitFor('5 answers to "post" while Redis is down', () => post.answers.length >= 5);
    await redis.restart!();
    const restartedAt = performance.now();
    const waitedBefore = cpuWaitMs();
    admin = redis.client();
    await waitFor('a decision on Redis after the restart', () => rl.admittedOnRedis('post') > 0, 5_000);
    // Less the time this process waited for a CPU meanwhile (test/support/cpu-wait.ts): the machine's, not the code's.
    resumedAfterMs = performance.now() - restartedAt - (cpuWaitMs() - waitedBefore);
    // Some more traffic on the new server, then the count is compared.
    const resumed = rl.admittedOnRedis('post');
    await waitFor('10 more decisions on Redis', () => rl.admittedOnRedis('post') >= resumed + 10);
    answers = pendingAt([...preAnswers, ...(await post.stop())], signalledAt);
  });
  afterAll(async () => {
    rejections.dispose();
    await rl?.close();
    await redis?.stop();
  });

  const resumes = client === 'GLIDE' ? 'at the circuit’s next probe, within a second of the restart' : 'within a second of the restart, probing when the client reconnects';
  it(`decides on Redis again ${resumes}`, () => {
    if (process.env.RESILIENCE_REPORT) console.log(`[restart/${client}] decisions on Redis resumed ${resumedAfterMs.toFixed(0)} ms after the restart; max latency ${maxLatency(answers).toFixed(1)} ms over ${answers.length} requests`);
    expect(resumedAfterMs).toBeLessThan(1_000);
  });

  it(`answers every request within timeoutMs + ${MARGIN_MS} ms across the crash and the restart`, () => {
    expect(maxLatency(answers)).toBeLessThanOrEqual(TIMEOUT_MS + MARGIN_MS);
  });

  it('counts on the new server exactly the decisions made on it', async () => {
    expect(await admin.zcard(rl.stateKey('post'))).toBe(rl.admittedOnRedis('post'));
  });

  it('does not replay on the new server the commands in flight when the old one died', async () => {
    // Every 'pre' decision Redis made was on the old server, whose data died with it.
    expect(await admin.exists(rl.stateKey('pre'))).toBe(0);
  });

  it('raises no unhandled rejection', () => {
    expect(rejections.seen).toEqual([]);
  });
});
