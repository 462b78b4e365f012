import type { Redis } from 'ioredis';
import { defineRule, RedisStore } from '../../lib/index.js';
import { ruleKeys } from '../../lib/keys/key.builder.js';
import { ManualClock } from '../support/manual.clock.js';
import { startRedis, uniquePrefix, type TestRedis } from '../support/redis-server.js';
import { expiryWithin, onRedisClock, pxExpiryRange } from '../support/redis-time.js';

/**
 * With a clock of the app's own (RedisStore's `clock`), decisions follow that clock while Redis expires keys on its
 * own. A fixed window's key, which expires when its window ends, gets a second more then (lua/fixed-window.lua): made
 * a few ms before its window ends, it must not expire before a call made moments later in real time at the same
 * instant of that clock, or the window's count is lost and the limit admits twice over.
 */
describe('fixed window on Redis with the clock option', () => {
  let redis: TestRedis;
  let client: Redis;
  beforeAll(async () => {
    redis = await startRedis();
    client = redis.client();
  });
  afterAll(() => redis.stop());

  const rule = defineRule({ algorithm: 'fixed-window', limit: 3, window: '1s' }, 'fw');

  it('keeps a window’s count for calls made later in real time at the same instant of the app’s clock', async () => {
    const clock = new ManualClock(1_800_000_000_998); // 2 ms before a window of 1 s ends
    const prefix = uniquePrefix();
    const store = new RedisStore(client, { keyPrefix: prefix, clock: clock.now });
    await store.consume('k', rule);
    await store.consume('k', rule);
    await new Promise((resolve) => setTimeout(resolve, 30)); // past those 2 ms on Redis's clock
    const third = await store.consume('k', rule);
    const fourth = await store.consume('k', rule);
    expect({ third: third.remaining, fourth: fourth.allowed }).toEqual({ third: 0, fourth: false });
    // Still gone soon after: a second past its window at most.
    expect(await client.pttl(ruleKeys(prefix, rule, 'k').state)).toBeLessThanOrEqual(1_002);
  });

  it('on Redis’s own clock, expires a window’s key when the window ends', async () => {
    const prefix = uniquePrefix();
    const store = new RedisStore(client, { keyPrefix: prefix });
    // Written by this call with PX resetAfterMs (ceil(window end - now)): from the instant Redis ran it, within the call.
    const { result: decision, beforeUs, afterUs } = await onRedisClock(client, () => store.consume('k', rule));
    const seen = expiryWithin(await client.pexpiretime(ruleKeys(prefix, rule, 'k').state), pxExpiryRange(decision.resetAfterMs, beforeUs, afterUs));
    expect(seen).toEqual({ ...seen, within: true });
  });
});
