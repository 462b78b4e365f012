import fc from 'fast-check';
import type { Redis } from 'ioredis';
import { RedisStore, type RateLimitRule } from '../../lib/index.js';
import { ruleKeys } from '../../lib/keys/key.builder.js';
import { ALGORITHMS, ruleArb } from '../property/decision.arbitraries.js';
import { startRedis, uniquePrefix, type TestRedis } from '../support/redis-server.js';

/**
 * Keys live as long as what they hold: a state key until its state is spent (fixed window: the window's end;
 * sliding log and window: newest + window; token bucket and GCRA: until full, and then to the end of that second of
 * Redis's clock, lua/includes/exact.lua's SLOT), which is what resetAfterMs reports, and a lockout key for the
 * lockout. The store runs on Redis's own clock (no `clock` option), so PTTL and the decision are measured on one
 * clock; PTTL may lag by the milliseconds the round trip took.
 */
/** Token bucket and GCRA keys expire at the end of the second their instant falls in (lua/includes/exact.lua). */
const toSecondEnd = (rule: RateLimitRule) => (rule.algorithm === 'token-bucket' || rule.algorithm === 'gcra' ? 1000 : 0);
const most = (rule: RateLimitRule) => (rule.algorithm === 'gcra' ? rule.burst : rule.limit);

describe('key TTLs on Redis', () => {
  let redis: TestRedis;
  let client: Redis;
  beforeAll(async () => {
    redis = await startRedis();
    client = redis.client();
  });
  afterAll(() => redis.stop());

  /**
   * resetAfterMs - PTTL must lie in [-1 - slackMs, 1 + the ms the call and the PTTL took]: rounding, then time
   * passing; `slackMs` is how much longer the key may live than its state.
   */
  const within = (label: string, expectedMs: number, pttl: number, elapsedMs: number, slackMs = 0) =>
    expect({ label, expectedMs, pttl, late: expectedMs - pttl <= 1 + Math.ceil(elapsedMs), early: expectedMs - pttl >= -1 - slackMs }).toEqual({
      label,
      expectedMs,
      pttl,
      late: true,
      early: true,
    });

  const cases = ALGORITHMS.flatMap((algorithm) => [false, true].map((lockout) => [algorithm, lockout ? 'with a lockout' : 'without a lockout', lockout] as const));

  it.each(cases)('%s %s: the state key expires when resetAfterMs says, the lockout key when the lockout ends, and no key is left without a TTL', async (algorithm, _l, lockout) => {
    // Windows and lockouts of a second or more, so that keys outlive the calls that look at them.
    const rules = ruleArb(algorithm, 'ttl', { lockout }).filter((r) => r.windowMs >= 1000 && (r.blockMs === 0 || r.blockMs >= 1000));
    await fc.assert(
      fc.asyncProperty(rules, fc.array(fc.nat(999), { minLength: 1, maxLength: 12 }), async (rule, picks) => {
        const prefix = uniquePrefix('ttl');
        const store = new RedisStore(client, { keyPrefix: prefix });
        const keys = ruleKeys(prefix, rule, 'k');
        let locked = false;
        for (const pick of picks) {
          const started = performance.now();
          const decision = await store.consume('k', rule, 1 + (pick % most(rule)));
          const [state, block] = await Promise.all([client.pttl(keys.state), client.pttl(keys.block)]);
          const elapsed = performance.now() - started;
          if (decision.allowed || rule.blockMs === 0) within('state key', decision.resetAfterMs, state, elapsed, toSecondEnd(rule));
          if (!decision.allowed && rule.blockMs > 0 && !locked) within('lockout key', rule.blockMs, block, elapsed);
          if (!decision.allowed && rule.blockMs > 0) locked = true;
          if (rule.blockMs === 0 || !locked) expect({ block }).toEqual({ block: -2 });
        }
        const found: string[] = [];
        let cursor = '0';
        do {
          const [next, batch] = await client.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
          found.push(...batch);
          cursor = next;
        } while (cursor !== '0');
        expect(found.filter((k) => k !== keys.state && k !== keys.block)).toEqual([]);
        // PTTL -1 is a key without a TTL; -2 is one that expired between SCAN and PTTL (a window ending now).
        for (const key of found) expect({ key, hasTtl: (await client.pttl(key)) !== -1 }).toEqual({ key, hasTtl: true });
      }),
      { numRuns: 25, seed: 20_261_127 },
    );
  });
});
