import type { Redis } from 'ioredis';
import { defineRule, RedisStore } from '../../lib/index.js';
import { ruleKeys } from '../../lib/keys/key.builder.js';
import { startRedis, uniquePrefix, type TestRedis } from '../support/redis-server.js';
import { expiryWithin, onRedisClock, pxExpiryRange } from '../support/redis-time.js';

/**
 * An escalating lockout keeps one key, `<prefix>:<rule>:{<tracker>}:block`, holding its start in µs ('start' at level
 * 0, 'start:level' above) and living until forgetAfter after the lockout's end, so that a quiet forgetAfter forgets the
 * level in Redis too. The store runs on Redis's own clock, so PTTL and the decision share one clock (PTTL may lag by
 * the ms the round trips took).
 */
describe('the escalating lockout key on Redis', () => {
  let redis: TestRedis;
  let client: Redis;
  beforeAll(async () => {
    redis = await startRedis();
    client = redis.client();
  });
  afterAll(() => redis.stop());

  const rule = defineRule({ algorithm: 'sliding-log', limit: 1, window: '1h', lockout: { base: '1m', factor: 2, forgetAfter: '10m' } }, 'login');

  it('holds the start alone at level 0 and the start with its level after an escalation, each living until forgetAfter after its end', async () => {
    const prefix = uniquePrefix('esc-key');
    const store = new RedisStore(client, { keyPrefix: prefix });
    const key = ruleKeys(prefix, rule, 'k').block;
    await store.consume('k', rule);
    // Each refusal writes the key with PX (lockout + forgetAfter), from the instant Redis ran it, within the call.
    const firstCall = await onRedisClock(client, () => store.consume('k', rule));
    const first = { value: await client.get(key), expiry: await client.pexpiretime(key) };
    // Back-date the lockout by its length, as if it had just ended, keeping the key alive: the next refusal escalates.
    const started = Number(first.value);
    await client.set(key, String(started - 60_000_000), 'PX', 600_000);
    const secondCall = await onRedisClock(client, () => store.consume('k', rule));
    const second = { value: await client.get(key), expiry: await client.pexpiretime(key) };
    expect({
      first: [/^\d+$/.test(first.value!), expiryWithin(first.expiry, pxExpiryRange(660_000, firstCall.beforeUs, firstCall.afterUs)).within],
      second: [second.value!.endsWith(':1'), expiryWithin(second.expiry, pxExpiryRange(720_000, secondCall.beforeUs, secondCall.afterUs)).within],
    }).toEqual({ first: [true, true], second: [true, true] });
  });
});
