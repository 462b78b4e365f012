import type { Redis } from 'ioredis';
import { defineRule, RedisStore, type RateLimitAlgorithm } from '../../lib/index.js';
import { startRedis, uniquePrefix, type TestRedis } from '../support/redis-server.js';
import { expiryWithin, onRedisClock, pxExpiryRange } from '../support/redis-time.js';

const ALGORITHMS: RateLimitAlgorithm[] = ['sliding-log', 'sliding-window', 'fixed-window', 'token-bucket', 'gcra'];

describe('RedisStore on a real redis-server', () => {
  let redis: TestRedis;
  let client: Redis;
  beforeAll(async () => {
    redis = await startRedis();
    client = redis.client();
  });
  afterAll(() => redis.stop());

  async function keysOf(prefix: string): Promise<string[]> {
    return client.keys(`${prefix}:*`);
  }

  it('gives every key it writes a TTL no longer than the rule needs', async () => {
    const prefix = uniquePrefix();
    const store = new RedisStore(client, { keyPrefix: prefix });
    for (const algorithm of ALGORITHMS) {
      const rule = defineRule({ algorithm, limit: 2, window: '30s', blockMs: '1m' }, algorithm);
      for (let i = 0; i < 3; i++) await store.consume('k', rule);
    }
    const keys = await keysOf(prefix);
    expect(keys).toHaveLength(ALGORITHMS.length * 2); // state + lockout per algorithm
    for (const key of keys) {
      const ttl = await client.pttl(key);
      expect([key, ttl > 0 && ttl <= 60_000]).toEqual([key, true]);
    }
  });

  it('expires the sliding log exactly one window after its newest entry', async () => {
    const prefix = uniquePrefix();
    const store = new RedisStore(client, { keyPrefix: prefix, clock: () => Date.now() });
    const rule = defineRule({ algorithm: 'sliding-log', limit: 5, window: '1500ms' }, 'log');
    // The entry is this call's: PEXPIRE 1500 from the instant Redis ran it, within the call on Redis's clock.
    const { beforeUs, afterUs } = await onRedisClock(client, () => store.consume('k', rule));
    const [key] = await keysOf(prefix);
    const seen = expiryWithin(await client.pexpiretime(key), pxExpiryRange(1500, beforeUs, afterUs));
    expect(seen).toEqual({ ...seen, within: true });
  });

  it('names keys <prefix>:<rule>:<algorithm and window>:{<tracker>} and keeps them bounded', async () => {
    const prefix = uniquePrefix();
    const store = new RedisStore(client, { keyPrefix: prefix });
    const rule = defineRule({ algorithm: 'fixed-window', limit: 2, window: '1m' }, 'api');
    await store.consume('user:42', rule);
    await store.consume('x'.repeat(10_000), rule);
    await store.consume('{evil}', rule);
    const keys = (await keysOf(prefix)).sort();
    expect(keys).toContain(`${prefix}:api:fw1m:{user:42}`);
    expect(keys.every((k) => k.length < prefix.length + 60)).toBe(true);
    expect(keys.filter((k) => k.includes('evil'))).toEqual([]);
  });

  it("puts the client's own ioredis keyPrefix before every key, lockouts included, as ioredis does for its commands", async () => {
    const prefix = uniquePrefix();
    const prefixed = redis.client({ keyPrefix: 'tenant-7:' });
    try {
      const store = new RedisStore(prefixed, { keyPrefix: prefix });
      const rule = defineRule({ algorithm: 'fixed-window', limit: 1, window: '1m', blockMs: '1m' }, 'api');
      expect((await store.consume('u', rule)).allowed).toBe(true);
      expect((await store.consume('u', rule)).allowed).toBe(false);
      expect((await client.keys(`tenant-7:${prefix}:*`)).sort()).toEqual([`tenant-7:${prefix}:api:fw1m:{u}`, `tenant-7:${prefix}:api:{u}:block`]);
      expect(await keysOf(prefix)).toEqual([]);
    } finally {
      prefixed.disconnect();
    }
  });

  it('decides on Redis time when no clock is given', async () => {
    const prefix = uniquePrefix();
    const store = new RedisStore(client, { keyPrefix: prefix });
    const rule = defineRule({ algorithm: 'gcra', limit: 1, window: '1h' }, 'tat');
    // A fresh key's TAT is now + T (T = 1 h): now lies within the call on Redis's clock.
    const { beforeUs, afterUs } = await onRedisClock(client, () => store.consume('k', rule));
    const now = Number(await client.get(`${prefix}:tat:gc1h:{k}`)) - 3_600_000_000;
    expect({ now, within: now >= beforeUs && now <= afterUs }).toEqual({ now, within: true });
  });

  it('keeps working after SCRIPT FLUSH between two calls', async () => {
    const store = new RedisStore(client, { keyPrefix: uniquePrefix() });
    const rule = defineRule({ algorithm: 'sliding-window', limit: 2, window: '1m' }, 'flush');
    expect((await store.consume('k', rule)).allowed).toBe(true);
    await client.script('FLUSH');
    expect(await store.consume('k', rule)).toMatchObject({ allowed: true, remaining: 0 });
  });

  it('keeps working after SCRIPT FLUSH for consumeAll over different algorithms', async () => {
    const store = new RedisStore(client, { keyPrefix: uniquePrefix() });
    const a = defineRule({ algorithm: 'sliding-log', limit: 2, window: '1m' }, 'a');
    const b = defineRule({ algorithm: 'token-bucket', limit: 2, window: '1m' }, 'b');
    await store.consumeAll([{ key: 'k', rule: a }, { key: 'k', rule: b }]);
    await client.script('FLUSH');
    expect((await store.consumeAll([{ key: 'k', rule: a }, { key: 'k', rule: b }])).allowed).toBe(true);
  });

  it('records nothing when handed a cost it refuses', async () => {
    const prefix = uniquePrefix();
    const store = new RedisStore(client, { keyPrefix: prefix });
    const rule = defineRule({ algorithm: 'sliding-log', limit: 2, window: '1m' }, 'bad');
    await expect(store.consume('k', rule, 3)).rejects.toThrow(/can ever admit/);
    expect(await keysOf(prefix)).toEqual([]);
  });

  it('refuses a key prefix that would set the cluster hash tag', () => {
    expect(() => new RedisStore(client, { keyPrefix: 'a{b}' })).toThrow(/keyPrefix/);
  });
});
