import type { Redis } from 'ioredis';
import { defineRule, RedisStore } from '../../lib/index.js';
import { ruleKeys } from '../../lib/keys/key.builder.js';
import { ManualClock } from '../support/manual.clock.js';
import { commandCalls, startRedis, uniquePrefix, type TestRedis } from '../support/redis-server.js';

/**
 * Token bucket and GCRA keep one instant per key (full-at, TAT) and expire it at the end of that instant's second
 * (lua/includes/exact.lua). A request that moves a whole-µs instant within its second is an INCRBY that keeps the
 * key's expiry, instead of a SET with PX (about 12,500 Redis instructions against 3,500); one that crosses into the
 * next second writes the key anew.
 */
describe('token bucket and GCRA: moving a key’s instant on Redis', () => {
  let redis: TestRedis;
  let client: Redis;
  beforeAll(async () => {
    // Its own server: the test reads the server's command counts.
    redis = await startRedis({ own: true });
    client = redis.client();
  });
  afterAll(() => redis.stop());

  async function counts(): Promise<{ set: number; incrby: number }> {
    const stats = await client.info('commandstats');
    return { set: commandCalls(stats, 'set'), incrby: commandCalls(stats, 'incrby') };
  }

  const rules = [
    defineRule({ algorithm: 'token-bucket', limit: 1000, window: '1s' }, 'tb'), // a token every 1,000 µs
    defineRule({ algorithm: 'gcra', limit: 1000, window: '1s', burst: 999 }, 'gcra'), // T = 1,000 µs
  ];

  it.each(rules.map((rule) => [rule.algorithm, rule] as const))('%s: INCRBY within the second, keeping the expiry; SET when the instant crosses into the next', async (_name, rule) => {
    const clock = new ManualClock(1_800_000_000_100); // 100 ms into a second
    const prefix = uniquePrefix();
    const store = new RedisStore(client, { keyPrefix: prefix, clock: clock.now });
    const key = ruleKeys(prefix, rule, 'k').state;
    await store.consume('k', rule); // a new key: written with its expiry, at the end of its second
    const expiry = await client.pexpiretime(key);
    const before = await counts();

    for (let i = 0; i < 5; i++) await store.consume('k', rule);
    const moved = await counts();
    expect({ value: await client.get(key), incrby: moved.incrby - before.incrby, set: moved.set - before.set }).toEqual({
      value: String(1_800_000_000_100_000 + 6 * 1000),
      incrby: 5,
      set: 0,
    });
    expect(await client.pexpiretime(key)).toBe(expiry);

    clock.advance(899); // 999 ms into the second: the next instant falls in the next one
    await store.consume('k', rule);
    const crossed = await counts();
    expect({ incrby: crossed.incrby - moved.incrby, set: crossed.set - moved.set }).toEqual({ incrby: 0, set: 1 });
    expect(await client.pexpiretime(key)).toBeGreaterThan(expiry);
  });
});
