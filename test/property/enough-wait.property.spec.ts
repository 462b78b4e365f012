import fc from 'fast-check';
import { defineRule, type RateLimitAlgorithm, type RateLimitRule, type RateLimitRuleOptions } from '../../lib/index.js';
import { useStores } from '../support/stores.js';

const ALGORITHMS: RateLimitAlgorithm[] = ['sliding-log', 'sliding-window', 'fixed-window', 'token-bucket', 'gcra'];

/** A rule of any algorithm, with a lockout shorter or longer than its window (fixed, or escalating by 1.5 or 2), or none. */
const rules = fc
  .record({
    algorithm: fc.constantFrom(...ALGORITHMS),
    limit: fc.integer({ min: 1, max: 6 }),
    window: fc.constantFrom(1000, 2000, 10_000),
    blockMs: fc.constantFrom(0, 0, 1, 500, 2000, 20_000),
    segments: fc.constantFrom(2, 4, 5, 10),
    refill: fc.integer({ min: 1, max: 8 }),
    burst: fc.integer({ min: 1, max: 6 }),
    factor: fc.constantFrom(1, 1.5, 2),
  })
  .map(({ algorithm, segments, refill, burst, factor, blockMs, ...rest }): RateLimitRule => {
    const own = algorithm === 'sliding-window' ? { segments } : algorithm === 'token-bucket' ? { refill } : algorithm === 'gcra' ? { burst } : {};
    const lockout = factor > 1 && blockMs > 0 ? { lockout: { base: blockMs, factor, max: blockMs * 8, forgetAfter: 30_000 } } : { blockMs };
    return defineRule({ algorithm, ...rest, ...own, ...lockout } as RateLimitRuleOptions, 'wait');
  });
/** Gaps in ms (bursts of zeros included) and a cost as a fraction of the most the rule admits at once. */
const steps = fc.array(fc.record({ gap: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 300 }), fc.integer({ min: 0, max: 4000 })), share: fc.double({ min: 0, max: 1, noNaN: true }) }), {
  minLength: 1,
  maxLength: 25,
});
const maxCost = (rule: RateLimitRule) => (rule.algorithm === 'gcra' ? rule.burst : rule.limit);

describe.each(['memory', 'redis'] as const)('on the %s store, waiting the reported retryAfterMs', (kind) => {
  const get = useStores(kind);

  it('is enough for the 6th request to a sliding log of 5 per 10 s with a 2 s lockout', async () => {
    const { store, clock } = get();
    const rule = defineRule({ algorithm: 'sliding-log', limit: 5, window: '10s', blockMs: '2s' }, 'log');
    for (let i = 0; i < 5; i++) await store.consume('k', rule);
    const refused = await store.consume('k', rule);
    expect(refused).toMatchObject({ allowed: false, retryAfterMs: 10_000 });
    clock.advance(refused.retryAfterMs);
    expect((await store.consume('k', rule)).allowed).toBe(true);
  });

  it('is enough, and a millisecond less is not, whatever the algorithm, lockout and cost', async () => {
    let tracker = 0;
    await fc.assert(
      fc.asyncProperty(rules, steps, async (rule, seq) => {
        const { store, clock } = get();
        const key = `w${tracker++}`;
        for (const { gap, share } of seq) {
          clock.advance(gap);
          const cost = 1 + Math.floor(share * (maxCost(rule) - 1));
          const d = await store.consume(key, rule, cost);
          if (d.allowed) continue;
          const at = `${rule.algorithm} limit ${rule.limit}/${rule.windowMs} ms, lockout ${rule.blockMs}${rule.lockoutFactor ? ` × ${rule.lockoutFactor}` : ''}, cost ${cost}, retryAfterMs ${d.retryAfterMs}`;
          expect([at, d.retryAfterMs > 0]).toEqual([at, true]);
          clock.advance(d.retryAfterMs - 1);
          expect([at, 'a ms before', (await store.peek(key, rule, cost)).allowed]).toEqual([at, 'a ms before', false]);
          clock.advance(1);
          expect([at, 'after the wait', (await store.consume(key, rule, cost)).allowed]).toEqual([at, 'after the wait', true]);
        }
      }),
      { numRuns: kind === 'memory' ? 400 : 80 },
    );
  });
});
