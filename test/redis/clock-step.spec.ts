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
  // Generous, so that a loaded machine (the whole suite in parallel) still fits the refused call, the new clock
  // measurement and the resend in it; the step is larger still.
  const TIMEOUT_MS = 1_000;
  const STEP_MS = 2 * TIMEOUT_MS;

  async function measuredStore(): Promise<RedisStore> {
    const store = new RedisStore(redis.client(), { keyPrefix: uniquePrefix(), timeoutMs: TIMEOUT_MS });
    // The first call measures Redis's clock (its TIME goes out before the script).
    await store.peek('k', rule);
    return store;
  }
  const step = (ms: number) => {
    Date.now = () => realNow() + ms;
  };

  it('decides the next call on Redis, having measured the clocks again at once', async () => {
    const store = await measuredStore();
    step(-STEP_MS);
    expect(await store.consume('k', rule)).toMatchObject({ allowed: true, remaining: 9 });
    expect(await store.consume('k', rule)).toMatchObject({ allowed: true, remaining: 8 });
  });

  it('decides stacked rules on Redis right after the step', async () => {
    const store = await measuredStore();
    step(-STEP_MS);
    const other = defineRule({ algorithm: 'fixed-window', limit: 5, window: '1m' }, 'step2');
    const result = await store.consumeAll([{ key: 'k', rule }, { key: 'k', rule: other }]);
    expect(result.decisions.map((d) => d.remaining)).toEqual([9, 4]);
  });

  it('decides on Redis right after the step when the new clock measurement\'s round trip is slow (a loaded host)', async () => {
    const client = redis.client();
    const store = new RedisStore(client, { keyPrefix: uniquePrefix(), timeoutMs: TIMEOUT_MS });
    await store.peek('k', rule);
    // Every later TIME answers 300 ms late: far past twice the first one's round trip, as a busy host can make it.
    const time = client.time.bind(client);
    client.time = (() => new Promise((resolve) => setTimeout(resolve, 300)).then(() => time())) as typeof client.time;
    step(-STEP_MS);
    expect(await store.consume('k', rule)).toMatchObject({ allowed: true, remaining: 9 });
    expect(await store.consume('k', rule)).toMatchObject({ allowed: true, remaining: 8 });
  });

  it('keeps deciding on Redis through the module, with the circuit closed, right after the step', async () => {
    const rl = await startResilientApp(redis, { failurePolicy: 'closed', circuitBreaker: { failureThreshold: 1 }, timeoutMs: TIMEOUT_MS });
    try {
      expect((await rl.get('a')).status).toBe(200);
      step(-STEP_MS);
      for (let i = 0; i < 3; i++) expect((await rl.get('a')).status).toBe(200);
      expect(rl.events.slice(-3).map((e) => e.result.decisions[0].degraded)).toEqual([undefined, undefined, undefined]);
      expect(rl.store.breaker.state).toBe('closed');
    } finally {
      Date.now = realNow;
      await rl.close();
    }
  });
});
