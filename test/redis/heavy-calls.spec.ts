import { Redis } from 'ioredis';
import { defineRule, RateLimitDeadlineError, RedisStore, ruleKeys, type RedisStoreOptions } from '../../lib/index.js';
import { slowRepliesProxy, type SlowRepliesProxy } from '../resilience/support/slow-replies.proxy.js';
import { startRedis, uniquePrefix, type TestRedis } from '../support/redis-server.js';

// The largest sliding log a rule may have: a consume of its whole limit adds 1,000 entries, about a millisecond of
// Redis's time. Redis runs the script calls it reads together before it sends any of their replies.
const heavy = defineRule({ algorithm: 'sliding-log', limit: 1000, window: '1h' }, 'heavy');
const REPLY_DELAY_MS = 100;

describe('RedisStore with calls that add many sliding-log entries', () => {
  let redis: TestRedis;
  let proxy: SlowRepliesProxy;
  const clients: Redis[] = [];
  beforeAll(async () => {
    redis = await startRedis({ own: true });
    proxy = await slowRepliesProxy(redis.port, REPLY_DELAY_MS);
  });
  afterAll(async () => {
    for (const client of clients) client.disconnect();
    await proxy.close();
    await redis.stop();
  });

  /** A store whose replies come back through the proxy, connected; and the proxy's script calls so far. */
  async function storeBehindProxy(options: RedisStoreOptions = {}): Promise<{ store: RedisStore; prefix: string; before: number; replies: number }> {
    const client = new Redis({ host: '127.0.0.1', port: proxy.port });
    clients.push(client);
    await client.ping();
    const prefix = uniquePrefix();
    // EVALSHA only: a function library's FUNCTION LOAD would add a reply of its own to the proxy's count.
    const store = new RedisStore(client, { keyPrefix: prefix, functions: false, ...options });
    return { store, prefix, before: proxy.scriptCalls, replies: proxy.scriptCallsAtReplies.length };
  }

  it('sends each in a script call of its own, once the one before it has been answered', async () => {
    const { store, before, replies } = await storeBehindProxy();
    const decisions = await Promise.all([0, 1, 2, 3].map((i) => store.consume(`k${i}`, heavy, 1000)));
    expect(decisions.every((d) => d.allowed)).toBe(true);
    // When each reply came back, how many script calls had been sent.
    expect(proxy.scriptCallsAtReplies.slice(replies).map((n) => n - before)).toEqual([1, 2, 3, 4]);
  });

  it('still coalesces the calls of one unit made in one turn', async () => {
    const { store, before } = await storeBehindProxy();
    const decisions = await Promise.all(Array.from({ length: 64 }, (_, i) => store.consume(`k${i}`, heavy)));
    expect(decisions.every((d) => d.allowed && d.remaining === 999)).toBe(true);
    // The first alone, at once; the other 63 in one batch.
    expect(proxy.scriptCalls - before).toBe(2);
  });

  it('does not send a call whose deadline passed while it waited for the heavy call before it', async () => {
    const { store, prefix, before } = await storeBehindProxy({ timeoutMs: 50 });
    const outcomes = await Promise.allSettled([0, 1, 2].map((i) => store.consume(`k${i}`, heavy, 1000)));
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'rejected']);
    for (const o of outcomes.slice(1)) expect((o as PromiseRejectedResult).reason).toBeInstanceOf(RateLimitDeadlineError);
    expect(proxy.scriptCalls - before).toBe(1);
    const admin = redis.client();
    expect(await Promise.all([0, 1, 2].map((i) => admin.zcard(ruleKeys(prefix, heavy, `k${i}`).state)))).toEqual([1000, 0, 0]);
  });
});
