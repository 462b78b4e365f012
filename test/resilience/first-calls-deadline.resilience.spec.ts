import type { Redis } from 'ioredis';
import { defineRule, MemoryStore, RedisStore, ResilientStore, ruleKeys, type Decision, type RedisClientLike } from '../../lib/index.js';
import { UNMEASURED_SKEW_MS } from '../../lib/stores/redis/redis-clock.offset.js';
import { startRedis, uniquePrefix, type TestRedis } from '../support/redis-server.js';
import { APP_CLIENTS, ping, suiteClients, watchUnhandledRejections, type AppClient } from './support/resilient-app.js';

const TIMEOUT_MS = 50;
const rule = defineRule({ algorithm: 'sliding-log', limit: 1000, window: '1h' }, 'first');
/** Long enough for Redis's clock to pass any deadline a stalled command carries, measured or not. Real time: there is no clock to move. */
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

// A store's first calls go out before it has measured Redis's clock (TIME), which its deadlines are expressed in:
// they must carry one all the same, or a Redis that stalls right after a deploy runs them all when it resumes.
// A store is fresh, its client need not be: one client per library serves the suite's stores.
describe.each<AppClient>(APP_CLIENTS)('deadlines of a store that has not measured Redis’s clock yet, on %s', (library) => {
  let redis: TestRedis;
  let admin: Redis;
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

  /** A fresh store; made while Redis is stopped, so that its first measurement of the clock (TIME) waits too. */
  function freshStore(prefix: string) {
    const redisStore = new RedisStore(client, { keyPrefix: prefix, timeoutMs: TIMEOUT_MS });
    return new ResilientStore(redisStore, new MemoryStore({ keyPrefix: prefix }), { timeoutMs: TIMEOUT_MS, failurePolicy: 'memory' });
  }

  /** Stops Redis, runs `during`, waits `ms`, resumes Redis, and returns once every command sent meanwhile has run. */
  async function stalled<T>(ms: number, during: () => Promise<T>): Promise<T> {
    redis.process!.kill('SIGSTOP');
    const result = await during();
    await sleep(ms);
    redis.process!.kill('SIGCONT');
    // Replies come in order on a connection: once this PING is answered, every command stuck before it has run.
    await ping(client);
    return result;
  }

  it('records nothing for the first calls of a fresh store that ran after their callers gave up', async () => {
    const prefix = uniquePrefix();
    const decisions: Decision[] = await stalled(TIMEOUT_MS + UNMEASURED_SKEW_MS + 200, () => {
      const store = freshStore(prefix);
      return Promise.all(Array.from({ length: 20 }, () => store.consume('k', rule)));
    });
    expect(decisions.map((d) => d.degraded)).toEqual(decisions.map(() => 'memory'));
    expect(await admin.zcard(ruleKeys(prefix, rule, 'k').state)).toBe(0);
  });

  it('does not stretch later deadlines by a stall that delayed its first measurement of the clock', async () => {
    const prefix = uniquePrefix();
    let store!: ResilientStore;
    // The TIME sent when the store was made is answered after a stall of 600 ms: it would put Redis's clock that
    // much ahead of ours, and every deadline that much later.
    await stalled(600, () => {
      store = freshStore(prefix);
      return store.consume('a', rule);
    });
    // The next call measures the clock again (TIME goes before it, and is answered by this PING).
    await store.consume('a', rule);
    await ping(client);
    const late = await stalled(250, () => store.consume('b', rule));
    expect(late.degraded).toBe('memory');
    expect(await admin.zcard(ruleKeys(prefix, rule, 'b').state)).toBe(0);
  });

  it('raises no unhandled rejection', () => {
    expect(rejections.seen).toEqual([]);
  });
});
