import fc from 'fast-check';
import type { Redis } from 'ioredis';
import { RedisStore, type RateLimitRule } from '../../lib/index.js';
import { ruleKeys } from '../../lib/keys/key.builder.js';
import { ALGORITHMS, ruleArb } from '../property/decision.arbitraries.js';
import { startRedis, uniquePrefix, type TestRedis } from '../support/redis-server.js';
import { expiryWithin, pxExpiryRange, redisTimeUs, timeUs } from '../support/redis-time.js';

/**
 * Keys live as long as what they hold: a state key until its state is spent (fixed window: the window's end;
 * sliding log and window: newest + window; token bucket and GCRA: until full, and then to the end of that second of
 * Redis's clock, lua/includes/exact.lua's SLOT), which is what resetAfterMs reports, and a lockout key for the
 * lockout. The store runs on Redis's own clock (no `clock` option), so the keys' expiries and the decisions are on
 * one clock.
 *
 * Each call is bracketed by Redis's TIME before it and after it (read with the keys' expiries, PEXPIRETIME, in one
 * MULTI): the decision's "now" lies between, whatever the machine's load, so the checks below hold on a busy machine
 * and are as tight as the calls were fast. A script's SET PX or PEXPIRE counts from Redis's clock when that write
 * runs (Redis 7.0; from 7.2 on, when the script started), not from the TIME the script decided by: a key written by
 * a call Redis was slow to run may outlive its state (or, on 7.2, fall short of it) by as long as the call took.
 */
/** Token bucket and GCRA keys expire at the end of the second their instant falls in (lua/includes/exact.lua). */
const toSecondEnd = (rule: RateLimitRule) => (rule.algorithm === 'token-bucket' || rule.algorithm === 'gcra' ? 1000 : 0);
const most = (rule: RateLimitRule) => (rule.algorithm === 'gcra' ? rule.burst : rule.limit);

/** One call on Redis's clock: TIME before it and TIME after it, in µs since the epoch. */
interface Bracket {
  beforeUs: number;
  afterUs: number;
}

describe('key TTLs on Redis', () => {
  let redis: TestRedis;
  let client: Redis;
  beforeAll(async () => {
    redis = await startRedis();
    client = redis.client();
  });
  afterAll(() => redis.stop());

  /**
   * The state key's expiry (ms since the epoch; -2: gone) against a decision made in `call` that reports
   * `resetAfterMs`. The state ends at now + the exact reset, which lies in (before + resetAfterMs - 1 ms,
   * after + resetAfterMs] (resetAfterMs is rounded up to the ms). The script that last wrote the expiry computed it as
   * ceil(end - its now) ms from the instant it wrote it, so the expiry lies within 1 ms (the rounding) plus that
   * writer's call time of the state's end, plus `slackMs` later: the key may outlive its state by that.
   */
  const stateExpiryWithin = (expiryMs: number, resetAfterMs: number, call: Bracket, writerUs: number, slackMs: number) => {
    const earliestUs = call.beforeUs + (resetAfterMs - 2) * 1000 - writerUs;
    const latestUs = call.afterUs + (resetAfterMs + 1 + slackMs) * 1000 + writerUs;
    // Gone (PEXPIRETIME -2) only if the state could have ended by the read (a window ending now).
    if (expiryMs === -2) return earliestUs <= call.afterUs;
    return expiryMs * 1000 > earliestUs && expiryMs * 1000 < latestUs;
  };

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
        // The state key's expiry as last read, and the µs of the call that may have written it (see stateExpiryWithin).
        let lastExpiry: number | undefined;
        let writerUs = 0;
        for (const pick of picks) {
          const beforeUs = await redisTimeUs(client);
          const decision = await store.consume('k', rule, 1 + (pick % most(rule)));
          const [time, state, block] = (await client.multi().time().pexpiretime(keys.state).pexpiretime(keys.block).exec())!.map(([error, value]) => {
            if (error) throw error;
            return value;
          }) as [[string, string], number, number];
          const call = { beforeUs, afterUs: timeUs(time) };
          const callUs = call.afterUs - call.beforeUs;
          // An expiry that moved was written by this call; one that did not, by this call or the one that wrote it.
          writerUs = state === lastExpiry ? Math.max(writerUs, callUs) : callUs;
          lastExpiry = state;
          if (decision.allowed || rule.blockMs === 0) {
            const seen = { key: 'state', resetAfterMs: decision.resetAfterMs, expiry: state, ...call, writerUs, within: stateExpiryWithin(state, decision.resetAfterMs, call, writerUs, toSecondEnd(rule)) };
            expect(seen).toEqual({ ...seen, within: true });
          }
          if (!decision.allowed && rule.blockMs > 0 && !locked) {
            // Set with PX blockMs by this call (lua/includes/driver.lua, lock_out).
            const seen = { key: 'lockout', blockMs: rule.blockMs, ...expiryWithin(block, pxExpiryRange(rule.blockMs, call.beforeUs, call.afterUs)) };
            expect(seen).toEqual({ ...seen, within: true });
          }
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
