import type { Redis } from 'ioredis';
import { defineRule, MemoryStore, RedisStore, type Decision, type RateLimitRule, type RateLimitStore } from '../../lib/index.js';
import { loadScript } from '../../lib/stores/redis/lua-script.loader.js';
import { ManualClock } from '../support/manual.clock.js';
import { startRedis, uniquePrefix, type TestRedis } from '../support/redis-server.js';

// An admission replies one integer, remaining × (window µs + 1) + reset after (µs), where that is exact; otherwise a
// pair, [remaining, reset after]. A lone call in the short form replies the integer alone (lua/includes/driver.lua).
const NOW_US = '1700000000000000';
const typical = defineRule({ algorithm: 'fixed-window', limit: 100, window: '1m' }, 'typical');
// 10^9 × (366 days in µs + 1) is past 2^53.
const huge = defineRule({ algorithm: 'fixed-window', limit: 1_000_000_000, window: '366d' }, 'huge');
// A GCRA whose burst is past its rate waits longer than its window to be full again.
const bursty = defineRule({ algorithm: 'gcra', limit: 2, window: '1s', burst: 10 }, 'bursty');

async function consumeUntilRefused(store: RateLimitStore, rule: RateLimitRule, clock: ManualClock): Promise<Decision[]> {
  const decisions: Decision[] = [];
  for (let i = 0; i < 12; i++) {
    decisions.push(await store.consume('k', rule), await store.peek('k', rule));
    clock.advance(37);
  }
  await store.refund('k', rule);
  decisions.push(await store.consume('k', rule));
  return decisions;
}

/** The same, three calls at a time made in one turn: with coalescing, the first goes alone and the other two in a batch. */
async function consumeInThrees(store: RateLimitStore, rule: RateLimitRule, clock: ManualClock): Promise<Decision[]> {
  const decisions: Decision[] = [];
  for (let i = 0; i < 8; i++) {
    decisions.push(...(await Promise.all([store.consume('k', rule), store.consume('k', rule), store.peek('k', rule)])));
    clock.advance(37);
  }
  return decisions;
}

// A batch of `calls` (the driver's batch form) of one definition, over `keys`.
const batchArgs = (keys: string[], calls: string, definition: string): [number, ...(string | number)[]] => [keys.length, ...keys, NOW_US, '', 1, 1, 0, calls, definition];

let redis: TestRedis;
let admin: Redis;
beforeAll(async () => {
  redis = await startRedis({ own: true });
  admin = redis.client();
});
afterAll(() => redis.stop());

/** The decisions `load` gets from a RedisStore with these options, and from a MemoryStore on the same clock. */
async function redisAndMemory(load: typeof consumeInThrees, rule: RateLimitRule, options: { coalesce?: false }): Promise<[Decision[], Decision[]]> {
  const clock = new ManualClock();
  const store = new RedisStore(redis.client(), { clock: clock.now, keyPrefix: uniquePrefix(), ...options });
  const redisDecisions = await load(store, rule, clock);
  clock.set(new ManualClock().ms);
  return [redisDecisions, await load(new MemoryStore({ clock: clock.now }), rule, clock)];
}

describe('the reply to an admitted lone call', () => {
  it('is one integer, remaining × (window + 1) + reset after, in the short form', async () => {
    const reply = await admin.eval(loadScript('fixed-window'), 1, `${uniquePrefix()}:k`, NOW_US, '', 'c', 'fw,100,60000,0');
    // 99 left; 1,700,000,000 s is 20 s into its window of 60 s, which ends 40 s later.
    expect(reply).toBe(99 * (60_000_000 + 1) + 40_000_000);
  });

  it('is the batch form when the integer would pass 2^53 or the wait to be full again passes the window', async () => {
    const key = `${uniquePrefix()}:k`;
    expect(await admin.eval(loadScript('fixed-window'), 1, key, NOW_US, '', 'c', `fw,1000000000,${366 * 86_400_000},0`)).toEqual([[999_999_999, expect.any(Number)]]);
    // GCRA: a request every 500 ms, a burst of 10. After three, its burst is whole again 1.5 s later.
    const gcra = () => admin.eval(loadScript('gcra'), 1, `${key}:g`, NOW_US, '', 'c', 'gcra,2,1000,0,10');
    expect([await gcra(), await gcra(), await gcra()]).toEqual([9 * 1_000_001 + 500_000, 8 * 1_000_001 + 1_000_000, [[7, 1_500_000]]]);
  });

  it.each([
    ['one integer', typical],
    ['the batch form, past 2^53', huge],
    ['the batch form, a wait past the window', bursty],
  ])('decides as the memory store when it is %s, alone', async (_name, rule) => {
    const [redisDecisions, memoryDecisions] = await redisAndMemory(consumeUntilRefused, rule, { coalesce: false });
    expect(redisDecisions).toEqual(memoryDecisions);
    expect(redisDecisions.some((d) => d.allowed)).toBe(true);
  });
});

describe('the reply to a batch', () => {
  it('is one integer per admission, three per refusal', async () => {
    const key = `${uniquePrefix()}:k`;
    // Limit 1: the first admitted (0 left, 40 s to the window's end), the second refused (0 left, 40 s, 40 s).
    const reply = await admin.eval(loadScript('fixed-window'), ...batchArgs([key, key, `${key}2`], '3:c1', 'fw,1,60000,0'));
    expect(reply).toEqual([40_000_000, -1, 40_000_000, 40_000_000, 40_000_000]);
  });

  it('holds a pair for an admission whose integer would pass 2^53 or whose wait to be full passes the window', async () => {
    const key = `${uniquePrefix()}:k`;
    const huge = await admin.eval(loadScript('fixed-window'), ...batchArgs([key, `${key}2`], '2:c1', `fw,1000000000,${366 * 86_400_000},0`));
    expect(huge).toEqual([[999_999_999, expect.any(Number)], [999_999_999, expect.any(Number)]]);
    const bursty = await admin.eval(loadScript('gcra'), ...batchArgs([`${key}:g`, `${key}:g`, `${key}:g`], '3:c1', 'gcra,2,1000,0,10'));
    expect(bursty).toEqual([9 * 1_000_001 + 500_000, 8 * 1_000_001 + 1_000_000, [7, 1_500_000]]);
  });

  it.each([
    ['one integer', typical],
    ['a pair, past 2^53', huge],
    ['a pair, a wait past the window', bursty],
  ])('decides as the memory store when it is %s', async (_name, rule) => {
    const [redisDecisions, memoryDecisions] = await redisAndMemory(consumeInThrees, rule, {});
    expect(redisDecisions).toEqual(memoryDecisions);
    expect(redisDecisions.some((d) => d.allowed)).toBe(true);
  });
});
