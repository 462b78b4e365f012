import type { Redis } from 'ioredis';
import { defineRule, MemoryStore, RedisStore, ResilientStore, ruleKeys, type Decision } from '../../lib/index.js';
import { UNMEASURED_SKEW_MS } from '../../lib/stores/redis/redis-clock.offset.js';
import { startRedis, uniquePrefix, type TestRedis } from '../support/redis-server.js';
import { watchUnhandledRejections } from './support/resilient-app.js';

const TIMEOUT_MS = 50;
const rule = defineRule({ algorithm: 'sliding-log', limit: 1000, window: '1h' }, 'first');
/** Long enough for Redis's clock to pass any deadline a stalled command carries, measured or not. Real time: there is no clock to move. */
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

// A store's first calls go out before it has measured Redis's clock (TIME), which its deadlines are expressed in:
// they must carry one all the same, or a Redis that stalls right after a deploy runs them all when it resumes.
describe('deadlines of a store that has not measured Redis’s clock yet', () => {
  let redis: TestRedis;
  let admin: Redis;
  let rejections: ReturnType<typeof watchUnhandledRejections>;
  beforeAll(async () => {
    rejections = watchUnhandledRejections();
    redis = await startRedis({ own: true });
    admin = redis.client();
  });
  afterEach(() => {
    redis.process?.kill('SIGCONT');
  });
  afterAll(async () => {
    rejections.dispose();
    await redis?.stop();
  });

  function stores(prefix: string) {
    const redisStore = new RedisStore(redis.client(), { keyPrefix: prefix, timeoutMs: TIMEOUT_MS });
    const store = new ResilientStore(redisStore, new MemoryStore({ keyPrefix: prefix }), { timeoutMs: TIMEOUT_MS, failurePolicy: 'memory' });
    return { redisStore, store };
  }

  /** Stops Redis, runs `during`, waits `ms`, resumes Redis, and returns once every command sent meanwhile has run. */
  async function stalled<T>(redisStore: RedisStore, ms: number, during: () => Promise<T>): Promise<T> {
    redis.process!.kill('SIGSTOP');
    const result = await during();
    await sleep(ms);
    redis.process!.kill('SIGCONT');
    // Replies come in order on a connection: once this PING is answered, every command stuck before it has run.
    await (redisStore.client as Redis).ping();
    return result;
  }

  it('records nothing for the first calls of a fresh store that ran after their callers gave up', async () => {
    const prefix = uniquePrefix();
    const { redisStore, store } = stores(prefix);
    const decisions: Decision[] = await stalled(redisStore, TIMEOUT_MS + UNMEASURED_SKEW_MS + 200, () =>
      Promise.all(Array.from({ length: 20 }, () => store.consume('k', rule))),
    );
    expect(decisions.map((d) => d.degraded)).toEqual(decisions.map(() => 'memory'));
    expect(await admin.zcard(ruleKeys(prefix, rule, 'k').state)).toBe(0);
  });

  it('does not stretch later deadlines by a stall that delayed its first measurement of the clock', async () => {
    const prefix = uniquePrefix();
    const { redisStore, store } = stores(prefix);
    // The TIME sent when the store was made is answered after a stall of 600 ms: it would put Redis's clock that
    // much ahead of ours, and every deadline that much later.
    await stalled(redisStore, 600, () => store.consume('a', rule));
    // The next call measures the clock again (TIME goes before it, and is answered by this PING).
    await store.consume('a', rule);
    await (redisStore.client as Redis).ping();
    const late = await stalled(redisStore, 250, () => store.consume('b', rule));
    expect(late.degraded).toBe('memory');
    expect(await admin.zcard(ruleKeys(prefix, rule, 'b').state)).toBe(0);
  });

  it('raises no unhandled rejection', () => {
    expect(rejections.seen).toEqual([]);
  });
});
