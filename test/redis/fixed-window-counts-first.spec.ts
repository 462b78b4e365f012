import type { Redis } from 'ioredis';
import { defineRule, RedisStore } from '../../lib/index.js';
import { ruleKeys } from '../../lib/keys/key.builder.js';
import { ManualClock } from '../support/manual.clock.js';
import { commandCalls, startRedis, uniquePrefix, type TestRedis } from '../support/redis-server.js';
import { expiryWithin, onRedisClock, pxExpiryRange } from '../support/redis-time.js';

/**
 * A fixed-window consume counts first (lua/fixed-window.lua, fw_take): an admitted request is one INCR, without the
 * GET it took before (a 16-digit string read back as a number cost Redis more than the INCR); a refused one gives its
 * units back in the same script, leaving the counter and its expiry as they were.
 */
describe('fixed window on Redis: counting first', () => {
  let redis: TestRedis;
  let client: Redis;
  beforeAll(async () => {
    // Its own server: the test reads the server's command counts.
    redis = await startRedis({ own: true });
    client = redis.client();
  });
  afterAll(() => redis.stop());

  async function counts(): Promise<Record<'get' | 'incr' | 'decrby' | 'set', number>> {
    const stats = await client.info('commandstats');
    return { get: commandCalls(stats, 'get'), incr: commandCalls(stats, 'incr'), decrby: commandCalls(stats, 'decrby'), set: commandCalls(stats, 'set') };
  }
  const since = (after: Record<string, number>, before: Record<string, number>) => Object.fromEntries(Object.keys(after).map((k) => [k, after[k] - before[k]]));

  const rule = defineRule({ algorithm: 'fixed-window', limit: 3, window: '10s' }, 'fw');
  const WINDOW_END_US = 1_800_000_010_000_000;

  it('admits a request of a counted window with one INCR and no GET', async () => {
    const clock = new ManualClock(1_800_000_001_000);
    const prefix = uniquePrefix();
    const store = new RedisStore(client, { keyPrefix: prefix, clock: clock.now, coalesce: false });
    const key = ruleKeys(prefix, rule, 'k').state;
    await store.consume('k', rule); // a new key: counted, then written with the window's end and its expiry
    const before = await counts();

    const decision = await store.consume('k', rule);
    expect(since(await counts(), before)).toEqual({ get: 0, incr: 1, decrby: 0, set: 0 });
    expect({ allowed: decision.allowed, remaining: decision.remaining, value: await client.get(key) }).toEqual({ allowed: true, remaining: 1, value: String(WINDOW_END_US + 2) });
  });

  it('leaves the counter and its expiry as they were when it refuses', async () => {
    const clock = new ManualClock(1_800_000_001_000);
    const prefix = uniquePrefix();
    const store = new RedisStore(client, { keyPrefix: prefix, clock: clock.now });
    const key = ruleKeys(prefix, rule, 'k').state;
    for (let i = 0; i < 3; i++) await store.consume('k', rule);
    const expiry = await client.pexpiretime(key);
    const before = await counts();

    clock.advance(2_000);
    const refused = await store.consume('k', rule);
    expect(since(await counts(), before)).toEqual({ get: 0, incr: 1, decrby: 1, set: 0 });
    expect({ allowed: refused.allowed, remaining: refused.remaining, retryAfterMs: refused.retryAfterMs }).toEqual({ allowed: false, remaining: 0, retryAfterMs: 7_000 });
    expect({ value: await client.get(key), expiry: await client.pexpiretime(key) }).toEqual({ value: String(WINDOW_END_US + 3), expiry });
  });

  it('starts the next window afresh, with its own expiry, on a key the clock has left behind', async () => {
    const clock = new ManualClock(1_800_000_001_000);
    const prefix = uniquePrefix();
    const store = new RedisStore(client, { keyPrefix: prefix, clock: clock.now });
    const key = ruleKeys(prefix, rule, 'k').state;
    for (let i = 0; i < 3; i++) await store.consume('k', rule);

    clock.advance(10_000); // the injected clock is in the next window; Redis has not expired the key yet
    const { result: decision, beforeUs, afterUs } = await onRedisClock(client, () => store.consume('k', rule));
    expect({ allowed: decision.allowed, remaining: decision.remaining, value: await client.get(key) }).toEqual({ allowed: true, remaining: 2, value: String(WINDOW_END_US + 10_000_000 + 1) });
    // Written anew for the new window: PX of its 9 s left on the injected clock and the second more that keys get
    // under a clock of the app's own (test/redis/clock-option-expiry.spec.ts), from the instant Redis ran it.
    const seen = expiryWithin(await client.pexpiretime(key), pxExpiryRange(10_000, beforeUs, afterUs));
    expect(seen).toEqual({ ...seen, within: true });
  });
});
