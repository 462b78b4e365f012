import { defineRule, MemoryStore, RedisStore, ruleKeys } from '../../lib/index.js';
import { ManualClock } from '../support/manual.clock.js';
import { startRedis, uniquePrefix, type TestRedis } from '../support/redis-server.js';

// The sliding-window hash stores cell numbers as small offsets from a base (field 'b'), to stay small in Redis.
describe('sliding-window hash encoding', () => {
  let redis: TestRedis;
  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(() => redis.stop());

  // 1 ms cells: a write every 999 ms keeps one cell live while the cell numbers run far past the base.
  const rule = defineRule({ algorithm: 'sliding-window', limit: 5, window: '1000ms', segments: 1000 }, 'enc');

  it('keeps offsets small and moves the base once they pass 32767, deciding as the memory twin does', async () => {
    const clock = new ManualClock();
    const prefix = uniquePrefix();
    const client = redis.client();
    const redisStore = new RedisStore(client, { clock: clock.now, keyPrefix: prefix });
    const memoryStore = new MemoryStore({ clock: clock.now, keyPrefix: prefix });
    const key = ruleKeys(prefix, rule, 'k').state;
    const bases = new Set<string>();
    for (let step = 0; step < 40; step++) {
      for (let i = 0; i < 3; i++) expect(await redisStore.consume('k', rule)).toEqual(await memoryStore.consume('k', rule));
      const fields = await client.hgetall(key);
      bases.add(fields.b);
      for (const field of Object.keys(fields).filter((f) => f !== 'b')) expect(Math.abs(Number(field))).toBeLessThanOrEqual(32767);
      clock.advance(999);
    }
    expect(bases.size).toBe(2);
  });

  // 'b' is written first, so a listpack hash (up to hash-max-listpack-entries fields, 512 here) replies it first; a hash
  // Redis has turned into a hash table replies its fields in no order, and the script must still find the base there.
  it('reads a hash kept as a hash table, its base field anywhere, deciding as the memory twin does', async () => {
    const wide = defineRule({ algorithm: 'sliding-window', limit: 5_000, window: '1000ms', segments: 1000 }, 'wide');
    const clock = new ManualClock();
    const prefix = uniquePrefix();
    const client = redis.client();
    const redisStore = new RedisStore(client, { clock: clock.now, keyPrefix: prefix });
    const memoryStore = new MemoryStore({ clock: clock.now, keyPrefix: prefix });
    const key = ruleKeys(prefix, wide, 'k').state;
    let baseAt = new Set<number>();
    for (let step = 0; step < 700; step++) {
      const cost = 1 + (step % 3);
      expect(await redisStore.consume('k', wide, cost)).toEqual(await memoryStore.consume('k', wide, cost));
      if (step % 100 === 99) {
        expect(await redisStore.peek('k', wide)).toEqual(await memoryStore.peek('k', wide));
        expect(await redisStore.refund('k', wide, 2)).toEqual(await memoryStore.refund('k', wide, 2));
      }
      if (step >= 600) baseAt.add((await client.hkeys(key)).indexOf('b'));
      clock.advance(step % 7 === 0 ? 2 : 1);
    }
    expect(await client.object('ENCODING', key)).toBe('hashtable');
    // Somewhere past the first field at least once: the case this test is for.
    baseAt = new Set([...baseAt].filter((i) => i > 0));
    expect(baseAt.size).toBeGreaterThan(0);
  });

  // A clock of the app's own (an injected one, the testing kit's) can jump far ahead while Redis, on its own clock,
  // still holds the key: its cells are then far in the past, whatever number of cells the jump was. (Cell numbers
  // kept modulo 32768 with no base, 15% fewer Redis instructions a decision, failed this: the old cells came back.)
  it.each([32_768, 65_541, 3_600_000])('starts afresh after an app clock jumps %d cells ahead while Redis keeps the key', async (cells) => {
    const clock = new ManualClock();
    const prefix = uniquePrefix();
    const redisStore = new RedisStore(redis.client(), { clock: clock.now, keyPrefix: prefix });
    const memoryStore = new MemoryStore({ clock: clock.now, keyPrefix: prefix });
    for (let i = 0; i < 3; i++) expect(await redisStore.consume('k', rule)).toEqual(await memoryStore.consume('k', rule));
    clock.advance(cells);
    const peeked = await redisStore.peek('k', rule);
    expect(peeked).toEqual(await memoryStore.peek('k', rule));
    // A peek reports what would remain after it.
    expect(peeked).toMatchObject({ allowed: true, remaining: 4 });
  });

  it('drops the whole key once no cell is live', async () => {
    const clock = new ManualClock();
    const prefix = uniquePrefix();
    const client = redis.client();
    const store = new RedisStore(client, { clock: clock.now, keyPrefix: prefix });
    await store.consume('k', rule);
    clock.advance(5_000);
    expect(await store.peek('k', rule)).toMatchObject({ allowed: true, remaining: 4 });
    expect(await client.exists(ruleKeys(prefix, rule, 'k').state)).toBe(0);
  });
});
