import fc from 'fast-check';
import type { Decision, RateLimitRule, RateLimitStore } from '../../lib/index.js';
import { ALGORITHMS, ruleArb } from '../property/decision.arbitraries.js';
import { REDIS_TTL_GUARD_MS, useFreshStores, type DirectStoreKind } from '../property/decision.replay.js';
import type { ManualClock } from '../support/manual.clock.js';

/**
 * The waits a decision reports are exact, whatever the algorithm, lockout and cost, and checked without any model:
 * the same request is refused at retryAfterMs - 1 and admitted at retryAfterMs; a look (cost 0) shows the full
 * budget at resetAfterMs and not at resetAfterMs - 1. The state before the request is built by random consumes.
 */
const most = (rule: RateLimitRule) => (rule.algorithm === 'gcra' ? rule.burst : rule.limit);
const prefixArb = fc.array(fc.record({ gap: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 30 }), fc.integer({ min: 0, max: 3000 })), cost: fc.nat(999) }), {
  maxLength: 12,
});

describe.each<DirectStoreKind>(['memory', 'redis'])('exact waits on the %s store', (kind) => {
  const fresh = useFreshStores(kind);
  const runs = kind === 'memory' ? 200 : 40;
  // Redis expires keys by its own clock, not the injected one: a short-lived key could vanish between two probes.
  const guardMs = kind === 'memory' ? 0 : REDIS_TTL_GUARD_MS;
  const ruleFor = (algorithm: (typeof ALGORITHMS)[number], lockout: boolean) =>
    ruleArb(algorithm, 'exact', { lockout }).filter((r) => r.blockMs === 0 || r.blockMs >= guardMs);

  /** Consumes the prefix; a key written to live less than the guard is let run out before the next step. */
  async function build(store: RateLimitStore, clock: ManualClock, rule: RateLimitRule, prefix: { gap: number; cost: number }[]) {
    let notBefore = -Infinity;
    for (const { gap, cost } of prefix) {
      clock.set(Math.max(clock.ms + gap, notBefore));
      const d = await store.consume('k', rule, 1 + (cost % most(rule)));
      // A refusal writes nothing but a lockout, and lockouts here outlive the guard.
      if (d.allowed && d.resetAfterMs < guardMs) notBefore = clock.ms + d.resetAfterMs;
    }
    clock.set(Math.max(clock.ms, notBefore));
  }

  /** Probes at instants after `at`, in time order (a look at a later instant may forget what an earlier one would count). */
  async function probe(store: RateLimitStore, clock: ManualClock, at: number, probes: { after: number; look: () => Promise<void> }[]) {
    for (const p of [...probes].sort((a, b) => a.after - b.after)) {
      clock.set(at + p.after);
      await p.look();
    }
  }

  const cases = ALGORITHMS.flatMap((algorithm) => [false, true].map((lockout) => [algorithm, lockout ? 'with a lockout' : 'without a lockout', lockout] as const));

  it.each(cases)('%s %s: a refused request is refused at retryAfterMs - 1 and admitted at retryAfterMs', async (algorithm, _label, lockout) => {
    await fc.assert(
      fc.asyncProperty(ruleFor(algorithm, lockout), prefixArb, fc.nat(999), fc.boolean(), async (rule, prefix, pick, consumeAtRetry) => {
        const { store, clock } = fresh();
        await build(store, clock, rule, prefix);
        const cost = most(rule) - (pick % most(rule));
        const refused = await store.consume('k', rule, cost);
        if (refused.allowed) return;
        const at = clock.ms;
        const seen: Record<string, Decision> = {};
        await probe(store, clock, at, [
          { after: refused.retryAfterMs - 1, look: async () => void (seen.before = await store.peek('k', rule, cost)) },
          { after: refused.retryAfterMs, look: async () => void (seen.at = await (consumeAtRetry ? store.consume('k', rule, cost) : store.peek('k', rule, cost))) },
        ]);
        expect({ cost, refused, before: seen.before.allowed, at: seen.at.allowed }).toEqual({ cost, refused, before: false, at: true });
      }),
      { numRuns: runs, seed: 20_261_125 },
    );
  });

  it.each(cases)('%s %s: a look shows the full budget at resetAfterMs and not a millisecond before', async (algorithm, _label, lockout) => {
    await fc.assert(
      fc.asyncProperty(ruleFor(algorithm, lockout), prefixArb, fc.nat(999), async (rule, prefix, pick) => {
        const { store, clock } = fresh();
        await build(store, clock, rule, prefix);
        const decision = await store.consume('k', rule, 1 + (pick % most(rule)));
        // An admitted request writes the key with a TTL of resetAfterMs: on Redis it must outlive the probes.
        if (decision.resetAfterMs === 0 || (decision.allowed && decision.resetAfterMs < guardMs)) return;
        const full = { allowed: true, limit: decision.limit, remaining: decision.limit, resetAfterMs: 0, retryAfterMs: 0 };
        const seen: Record<string, Decision> = {};
        await probe(store, clock, clock.ms, [
          { after: decision.resetAfterMs - 1, look: async () => void (seen.before = await store.peek('k', rule, 0)) },
          { after: decision.resetAfterMs, look: async () => void (seen.at = await store.peek('k', rule, 0)) },
        ]);
        expect({ decision, at: seen.at }).toEqual({ decision, at: full });
        expect({ decision, before: seen.before }).not.toEqual({ decision, before: full });
      }),
      { numRuns: runs, seed: 20_261_126 },
    );
  });
});
