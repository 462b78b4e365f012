import fc from 'fast-check';
import { ALGORITHMS, ruleArb, stepsArb } from './decision.arbitraries.js';
import { REDIS_TTL_GUARD_MS, replay, useFreshStores, type DirectStoreKind } from './decision.replay.js';

// Fixed seeds: a failure here fails the same way on every run, and fast-check prints the shrunk steps.
const SEED = 20_261_123;

describe.each<DirectStoreKind>(['memory', 'redis'])('every decision field on the %s store, against the reference models', (kind) => {
  const fresh = useFreshStores(kind);
  const runs = kind === 'memory' ? 150 : 30;
  const guardMs = kind === 'memory' ? 0 : REDIS_TTL_GUARD_MS;
  const check = (property: fc.IAsyncProperty<[unknown, unknown]>) => fc.assert(property, { numRuns: runs, seed: SEED });

  it.each(ALGORITHMS)(
    '%s: remaining, resetAfterMs and retryAfterMs equal the model over random rules, costs, peeks, refunds, resets, three trackers and gaps at boundaries and waits',
    async (algorithm) => {
      await check(
        fc.asyncProperty(ruleArb(algorithm, 'r0'), stepsArb({ rules: 1, trackers: 3 }), async (rule, steps) => {
          const { store, clock } = fresh();
          await replay(store, clock, [rule], steps, guardMs);
        }),
      );
    },
  );

  it.each(ALGORITHMS)('%s: decisions still equal the model when the clock steps back', async (algorithm) => {
    await check(
      fc.asyncProperty(ruleArb(algorithm, 'r0'), stepsArb({ rules: 1, trackers: 2, back: true }), async (rule, steps) => {
        const { store, clock } = fresh();
        await replay(store, clock, [rule], steps, guardMs);
      }),
    );
  });

  it.each(['token-bucket', 'gcra'] as const)('%s: decisions are exact when window/rate is not a whole number of µs', async (algorithm) => {
    await check(
      fc.asyncProperty(ruleArb(algorithm, 'r0', { fractionalIntervals: true }), stepsArb({ rules: 1, trackers: 2, back: true }), async (rule, steps) => {
        const { store, clock } = fresh();
        await replay(store, clock, [rule], steps, guardMs);
      }),
    );
  });

  it('consumeAll over several rules and trackers admits all-or-nothing and reports every rule as the model does', async () => {
    const rules = fc.tuple(...[0, 1, 2].map((i) => fc.constantFrom(...ALGORITHMS).chain((algorithm) => ruleArb(algorithm, `r${i}`))));
    await check(
      fc.asyncProperty(rules, stepsArb({ rules: 3, trackers: 2, consumeAll: true, back: true }), async (drawn, steps) => {
        const { store, clock } = fresh();
        await replay(store, clock, drawn, steps, guardMs);
      }),
    );
  });
});
