import type { Redis } from 'ioredis';
import { defineRule, MemoryStore, RedisStore, type Decision, type RateLimitRule, type RateLimitStore } from '../../lib/index.js';
import { loadScript } from '../../lib/stores/lua-script.loader.js';
import { ManualClock } from '../support/manual.clock.js';
import { startRedis, uniquePrefix, type TestRedis } from '../support/redis-server.js';

// An admitted lone call in the short form replies one integer, remaining × (window µs + 1) + reset after (µs), where
// that is exact; otherwise the two integers of the batch form (lua/includes/driver.lua).
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

describe('the reply to an admitted lone call', () => {
  let redis: TestRedis;
  let admin: Redis;
  beforeAll(async () => {
    redis = await startRedis({ own: true });
    admin = redis.client();
  });
  afterAll(() => redis.stop());

  it('is one integer, remaining × (window + 1) + reset after, in the short form', async () => {
    const reply = await admin.eval(loadScript('fixed-window'), 1, `${uniquePrefix()}:k`, NOW_US, '', 'c', 'fw', '100', '60000', '0');
    // 99 left; 1,700,000,000 s is 20 s into its window of 60 s, which ends 40 s later.
    expect(reply).toBe(99 * (60_000_000 + 1) + 40_000_000);
  });

  it('is the batch form when the integer would pass 2^53 or the wait to be full again passes the window', async () => {
    const key = `${uniquePrefix()}:k`;
    expect(await admin.eval(loadScript('fixed-window'), 1, key, NOW_US, '', 'c', 'fw', '1000000000', String(366 * 86_400_000), '0')).toEqual([999_999_999, expect.any(Number)]);
    // GCRA: a request every 500 ms, a burst of 10. After three, its burst is whole again 1.5 s later.
    const gcra = () => admin.eval(loadScript('gcra'), 1, `${key}:g`, NOW_US, '', 'c', 'gcra', '2', '1000', '0', '10');
    expect([await gcra(), await gcra(), await gcra()]).toEqual([9 * 1_000_001 + 500_000, 8 * 1_000_001 + 1_000_000, [7, 1_500_000]]);
  });

  it.each([
    ['one integer', typical],
    ['the batch form, past 2^53', huge],
    ['the batch form, a wait past the window', bursty],
  ])('decides as the memory store when it is %s', async (_name, rule) => {
    const clock = new ManualClock();
    const store = new RedisStore(redis.client(), { clock: clock.now, keyPrefix: uniquePrefix(), coalesce: false });
    const redisDecisions = await consumeUntilRefused(store, rule, clock);
    clock.set(new ManualClock().ms);
    const memoryDecisions = await consumeUntilRefused(new MemoryStore({ clock: clock.now }), rule, clock);
    expect(redisDecisions).toEqual(memoryDecisions);
    expect(redisDecisions.some((d) => d.allowed)).toBe(true);
  });
});
