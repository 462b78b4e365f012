import type { Redis } from 'ioredis';
import { defineRule, MemoryStore, RedisStore, type Decision, type RateLimitRule, type RateLimitStore } from '../../lib/index.js';
import { MAX_EXACT_UNITS } from '../../lib/algorithms/exact-instant.js';
import { maxCost, MAX_WINDOW_MS } from '../../lib/rules/define-rule.js';
import { loadScript } from '../../lib/stores/redis/lua-script.loader.js';
import { ManualClock } from '../support/manual.clock.js';
import { startRedis, uniquePrefix, type TestRedis } from '../support/redis-server.js';

// Integers at the edge of exactness. ioredis 6 decodes an integer digit by digit as `n * 10 + byte - 48`, whose
// intermediate `n * 10 + byte` rounds within 58 of 2^53: so a reply carries bare integers only below 2^52, and
// larger magnitudes as their digits (lua/includes/driver.lua).
const TWO_53 = 2 ** 53;
const WINDOW_US = MAX_WINDOW_MS * 1000;

// The largest limits each algorithm admits (define-rule.ts), and windows up to the longest.
const rules: RateLimitRule[] = [
  defineRule({ algorithm: 'sliding-window', limit: TWO_53 - 1, window: '366d' }, 'sw-max'),
  defineRule({ algorithm: 'sliding-window', limit: TWO_53 - 2, window: '1h' }, 'sw-max-less-one'),
  defineRule({ algorithm: 'sliding-window', limit: 2 ** 52, window: '1m' }, 'sw-2-52'),
  defineRule({ algorithm: 'sliding-window', limit: 2 ** 52 + 1, window: '10s', segments: 2 }, 'sw-2-52-plus-one'),
  // A token bucket's limit × its interval stays within MAX_EXACT_UNITS: an interval of 1 µs allows the most.
  defineRule({ algorithm: 'token-bucket', limit: MAX_EXACT_UNITS, window: '1s', refill: 1_000_000 }, 'tb-max'),
  defineRule({ algorithm: 'token-bucket', limit: 2 ** 51, window: '366d', refill: WINDOW_US }, 'tb-2-51'),
  defineRule({ algorithm: 'gcra', limit: 1_000_000, window: '1s', burst: MAX_EXACT_UNITS }, 'gcra-max'),
  defineRule({ algorithm: 'gcra', limit: WINDOW_US, window: '366d', burst: 2 ** 51 + 3 }, 'gcra-2-51'),
  defineRule({ algorithm: 'fixed-window', limit: WINDOW_US - 1, window: '366d' }, 'fw-max'),
  defineRule({ algorithm: 'sliding-log', limit: 1000, window: '366d' }, 'sl-max'),
];

/**
 * For each k of 1..64: consume k units, then ask for all of them (a refusal reporting capacity - k left), peek at all
 * and at none; then, a millisecond later, consume what is left and one more. Made in one turn, so that with
 * coalescing they go as a batch; for each key in the order written.
 */
async function nearTheLimit(store: RateLimitStore, rule: RateLimitRule, clock: ManualClock): Promise<Decision[]> {
  const capacity = maxCost(rule);
  const ks = Array.from({ length: 64 }, (_, i) => Math.min(i + 1, capacity));
  const first = await Promise.all(
    ks.flatMap((k) => [store.consume(`k${k}`, rule, k), store.consume(`k${k}`, rule, capacity), store.peek(`k${k}`, rule, capacity), store.peek(`k${k}`, rule, 0)]),
  );
  clock.advance(1);
  const second = await Promise.all(ks.flatMap((k) => [store.consume(`k${k}`, rule, Math.min(capacity - k + 1, capacity)), store.consume(`k${k}`, rule, Math.max(1, capacity - k))]));
  return [...first, ...second];
}

let redis: TestRedis;
let admin: Redis;
beforeAll(async () => {
  redis = await startRedis({ own: true });
  admin = redis.client();
});
afterAll(() => redis.stop());

describe('decisions at the edge of exact integers', () => {
  it.each(rules.flatMap((rule) => [{ rule, coalesce: true }, { rule, coalesce: false }]))('are the memory store’s under $rule.name (coalescing $coalesce)', async ({ rule, coalesce }) => {
    const clock = new ManualClock();
    const store = new RedisStore(redis.client(), { clock: clock.now, keyPrefix: uniquePrefix(), coalesce });
    const onRedis = await nearTheLimit(store, rule, clock);
    clock.set(new ManualClock().ms);
    const inMemory = await nearTheLimit(new MemoryStore({ clock: clock.now }), rule, clock);
    expect(onRedis).toEqual(inMemory);
    expect(onRedis.some((d) => d.allowed) && onRedis.some((d) => !d.allowed)).toBe(true);
  });
});

describe('the reply', () => {
  const NOW_US = '1700000000000000';

  it('carries a remaining of 2^52 or more as its digits, in a pair and in a refusal', async () => {
    const key = `${uniquePrefix()}:k`;
    const definition = `sw,${TWO_53 - 1},1000,0,1`;
    // Two calls of one rule in the batch form: 1 unit (2^53 - 2 left), then all of it (refused, 2^53 - 2 left).
    const reply = await admin.eval(loadScript('sliding-window'), 2, key, key, NOW_US, '', 2, 1, 0, 'c1', `c1*${TWO_53 - 1}`, definition);
    expect(reply).toEqual([[String(TWO_53 - 2), expect.any(Number)], String(1 - TWO_53), expect.any(Number), expect.any(Number)]);
  });
});
