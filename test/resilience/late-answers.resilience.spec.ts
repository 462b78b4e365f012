import type { Redis } from 'ioredis';
import { defineRule, MemoryStore, RedisStore, ResilientStore, ruleKeys, type CircuitState, type RedisClientLike } from '../../lib/index.js';
import { startRedis, uniquePrefix, type TestRedis } from '../support/redis-server.js';
import { APP_CLIENTS, ping, suiteClients, waitFor, watchUnhandledRejections, type AppClient } from './support/resilient-app.js';
import { slowRepliesProxy, type SlowRepliesProxy } from './support/slow-replies.proxy.js';

const TIMEOUT_MS = 50;
const rule = defineRule({ algorithm: 'sliding-log', limit: 10, window: '1h' }, 'late');
const other = defineRule({ algorithm: 'fixed-window', limit: 10, window: '1h' }, 'late-fw');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.each<AppClient>(APP_CLIENTS)('answers the primary gives after the failure policy decided, through %s', (library) => {
  let redis: TestRedis;
  let admin: Redis;
  /** One client on Redis, for the tests that stall it; those behind the proxy are opened per test. */
  let client: RedisClientLike;
  const clients = suiteClients(library);
  let rejections: ReturnType<typeof watchUnhandledRejections>;
  beforeAll(async () => {
    rejections = watchUnhandledRejections();
    redis = await startRedis({ own: true });
    admin = redis.client();
    client = await clients.open(redis.port);
  });
  afterEach(() => {
    redis.process?.kill('SIGCONT');
  });
  afterAll(async () => {
    rejections.dispose();
    await clients.closeAll();
    await redis?.stop();
  });

  describe('a reply held up on its way back', () => {
    let proxy: SlowRepliesProxy;
    const slowClients = suiteClients(library);
    beforeAll(async () => {
      proxy = await slowRepliesProxy(redis.port, 4 * TIMEOUT_MS);
    });
    afterAll(async () => {
      await slowClients.closeAll();
      await proxy.close();
    });

    it.each([
      ['consume', (store: ResilientStore) => store.consume('k', rule, 3)],
      ['consumeAll', (store: ResilientStore) => store.consumeAll([{ key: 'k', rule, cost: 3 }, { key: 'k', rule: other }])],
    ])('gives back what Redis counted for a %s whose caller the failure policy decided', async (_op, call) => {
      const prefix = uniquePrefix();
      const slow = await slowClients.open(proxy.port);
      const redisStore = new RedisStore(slow, { keyPrefix: prefix, timeoutMs: TIMEOUT_MS });
      const store = new ResilientStore(redisStore, new MemoryStore({ keyPrefix: prefix }), { timeoutMs: TIMEOUT_MS, failurePolicy: 'memory' });
      const decision = await call(store);
      expect('decisions' in decision ? decision.decisions[0].degraded : decision.degraded).toBe('memory');
      // Redis ran it at once and counted 3 units; once its reply is read, late, the units are given back.
      const counted = () => admin.zcard(ruleKeys(prefix, rule, 'k').state);
      await waitFor('Redis to run the call', async () => (await counted()) === 3);
      const direct = new RedisStore(admin, { keyPrefix: prefix });
      // One refund per rule: script calls of their own, which Redis may run with other commands between them.
      await waitFor('the units given back', async () => (await counted()) === 0 && (await direct.peek('k', other, 0)).remaining === 10);
      // The fallback counted the request, as it decided it.
      expect(await store.fallback.peek('k', rule, 0)).toMatchObject({ remaining: 7 });
    });
  });

  it('decides a call once when its store fails after the timeout: the failure policy and onError are told of it once', async () => {
    const prefix = uniquePrefix();
    const redisStore = new RedisStore(client, { keyPrefix: prefix, timeoutMs: TIMEOUT_MS });
    const errors: string[] = [];
    const store = new ResilientStore(redisStore, new MemoryStore({ keyPrefix: prefix }), {
      timeoutMs: TIMEOUT_MS,
      failurePolicy: 'memory',
      onError: (error) => errors.push(error.name),
    });
    await store.consume('warm', rule);
    // Only the call below is under test: a warm-up that a loaded machine made late is not.
    errors.length = 0;
    redis.process!.kill('SIGSTOP');
    expect((await store.consume('k', rule)).degraded).toBe('memory');
    await sleep(3 * TIMEOUT_MS);
    redis.process!.kill('SIGCONT');
    // Redis runs the command after its deadline: a RateLimitDeadlineError, for a caller answered already.
    await ping(client);
    await sleep(10);
    expect(errors).toEqual(['RateLimitTimeoutError']);
    expect(await store.fallback.peek('k', rule, 0)).toMatchObject({ remaining: 9 });
  });

  it('opens the circuit on a stalled Redis, which answers nothing', async () => {
    const prefix = uniquePrefix();
    const circuit: CircuitState[] = [];
    const redisStore = new RedisStore(client, { keyPrefix: prefix, timeoutMs: TIMEOUT_MS });
    const store = new ResilientStore(redisStore, new MemoryStore({ keyPrefix: prefix }), {
      timeoutMs: TIMEOUT_MS,
      circuitBreaker: { failureThreshold: 3, minOpenMs: 60_000 },
      onCircuitChange: (state) => circuit.push(state),
    });
    await store.consume('warm', rule);
    redis.process!.kill('SIGSTOP');
    // Made together: all three were waiting, and none was answered.
    await Promise.all([store.consume('a', rule), store.consume('b', rule), store.consume('c', rule)]);
    expect(circuit).toEqual(['open']);
  });

  it('raises no unhandled rejection', () => {
    expect(rejections.seen).toEqual([]);
  });
});
