import { defineRule, MemoryStore, RedisStore, ruleKeys } from '../../lib/index.js';
import { ManualClock } from '../support/manual.clock.js';
import { startRedis, uniquePrefix, type TestRedis } from '../support/redis-server.js';

// The sliding-window hash names each cell by its number modulo 65536 (lua/sliding-window.lua), to stay small in Redis.
describe('sliding-window hash encoding', () => {
  let redis: TestRedis;
  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(() => redis.stop());

  // 1 ms cells: the cell number is the time in ms.
  const rule = defineRule({ algorithm: 'sliding-window', limit: 5, window: '1000ms', segments: 1000 }, 'enc');

  function stores() {
    const clock = new ManualClock();
    const prefix = uniquePrefix();
    const client = redis.client();
    const redisStore = new RedisStore(client, { clock: clock.now, keyPrefix: prefix });
    const memoryStore = new MemoryStore({ clock: clock.now, keyPrefix: prefix });
    return { clock, client, redisStore, memoryStore, key: ruleKeys(prefix, rule, 'k').state };
  }

  it('names each cell by its number modulo 65536, and decides as the memory twin across the wrap to 0', async () => {
    const { clock, client, redisStore, memoryStore, key } = stores();
    const wrap = Math.ceil(clock.ms / 65_536) * 65_536;
    clock.set(wrap - 3);
    for (let step = 0; step < 6; step++) {
      expect(await redisStore.consume('k', rule)).toEqual(await memoryStore.consume('k', rule));
      clock.advance(1);
    }
    // Five admitted, in the cells of 3, 2 and 1 ms before the wrap and the two after it; the sixth refused.
    expect(await client.hgetall(key)).toEqual({ '65533': '1', '65534': '1', '65535': '1', '0': '1', '1': '1' });
    // 997 ms later the first cell has left the window: one unit free, in the cell numbered 1,000.
    clock.advance(997 - 6 + 3);
    expect(await redisStore.consume('k', rule)).toEqual(await memoryStore.consume('k', rule));
    expect(await client.hgetall(key)).toEqual({ '65534': '1', '65535': '1', '0': '1', '1': '1', '997': '1' });
  });

  it('counts a cell ahead of the clock (a clock stepped back), as the memory twin does', async () => {
    const { clock, redisStore, memoryStore } = stores();
    for (let i = 0; i < 3; i++) expect(await redisStore.consume('k', rule)).toEqual(await memoryStore.consume('k', rule));
    clock.advance(-20);
    for (let i = 0; i < 3; i++) expect(await redisStore.consume('k', rule)).toEqual(await memoryStore.consume('k', rule));
    expect(await redisStore.peek('k', rule)).toMatchObject({ allowed: false, remaining: 0 });
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
