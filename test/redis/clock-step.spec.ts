import { defineRule, RedisStore } from '../../lib/index.js';
import { startRedis, uniquePrefix, type TestRedis } from '../support/redis-server.js';
import { startResilientApp } from '../resilience/support/resilient-app.js';

// Redis's clock and ours are compared once a minute; between two measurements either can step (NTP, a Sentinel
// failover to a host whose clock is ahead). Redis's TIME cannot be stepped in a test, so our own clock is: a step
// of ours back is, for the deadlines, the same as a step of Redis's forward.
describe('a clock step larger than timeoutMs between two clock measurements', () => {
  let redis: TestRedis;
  const realNow = Date.now;
  beforeAll(async () => {
    redis = await startRedis();
  });
  afterEach(() => {
    Date.now = realNow;
  });
  afterAll(() => redis.stop());

  const rule = defineRule({ algorithm: 'sliding-log', limit: 10, window: '1m' }, 'step');

  async function measuredStore(): Promise<RedisStore> {
    const store = new RedisStore(redis.client(), { keyPrefix: uniquePrefix(), timeoutMs: 50 });
    // The first call measures Redis's clock (its TIME goes out before the script).
    await store.peek('k', rule);
    return store;
  }
  const step = (ms: number) => {
    Date.now = () => realNow() + ms;
  };

  it('decides the next call on Redis, having measured the clocks again at once', async () => {
    const store = await measuredStore();
    step(-100);
    expect(await store.consume('k', rule)).toMatchObject({ allowed: true, remaining: 9 });
    expect(await store.consume('k', rule)).toMatchObject({ allowed: true, remaining: 8 });
  });

  it('decides stacked rules on Redis right after the step', async () => {
    const store = await measuredStore();
    step(-100);
    const other = defineRule({ algorithm: 'fixed-window', limit: 5, window: '1m' }, 'step2');
    const result = await store.consumeAll([{ key: 'k', rule }, { key: 'k', rule: other }]);
    expect(result.decisions.map((d) => d.remaining)).toEqual([9, 4]);
  });

  it('keeps deciding on Redis through the module, with the circuit closed, right after the step', async () => {
    const rl = await startResilientApp(redis, { failurePolicy: 'closed', circuitBreaker: { failureThreshold: 1 } });
    try {
      expect((await rl.get('a')).status).toBe(200);
      step(-100);
      for (let i = 0; i < 3; i++) expect((await rl.get('a')).status).toBe(200);
      expect(rl.events.slice(-3).map((e) => e.result.decisions[0].degraded)).toEqual([undefined, undefined, undefined]);
      expect(rl.store.breaker.state).toBe('closed');
    } finally {
      Date.now = realNow;
      await rl.close();
    }
  });
});
