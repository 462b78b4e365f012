import fc from 'fast-check';
import { ALGORITHMS, ruleArb, stepsArb } from './decision.arbitraries.js';
import { REDIS_TTL_GUARD_MS, replay, useFreshStores, type DirectStoreKind } from './decision.replay.js';

const SEED = 20_261_124;

describe.each<DirectStoreKind>(['memory', 'redis'])('lockouts on the %s store, against the reference models', (kind) => {
  const fresh = useFreshStores(kind);
  const runs = kind === 'memory' ? 150 : 30;
  const guardMs = kind === 'memory' ? 0 : REDIS_TTL_GUARD_MS;
  const check = (property: fc.IAsyncProperty<[unknown, unknown]>) => fc.assert(property, { numRuns: runs, seed: SEED });

  it.each(ALGORITHMS)(
    '%s: a refusal starts a lockout reporting the longer of it and the algorithm\'s own wait and reset, and refusals during it report what is left, as the model does',
    async (algorithm) => {
      await check(
        fc.asyncProperty(ruleArb(algorithm, 'r0', { lockout: true }), stepsArb({ rules: 1, trackers: 2, back: true }), async (rule, steps) => {
          const { store, clock } = fresh();
          await replay(store, clock, [rule], steps, guardMs);
        }),
      );
    },
  );

  it.each(ALGORITHMS)(
    '%s: an escalating lockout lasts one level longer when it starts less than forgetAfter after the previous one ended, back to base after a quiet forgetAfter, forgotten on reset, as the model does',
    async (algorithm) => {
      await check(
        fc.asyncProperty(ruleArb(algorithm, 'r0', { lockout: true, escalating: true }), stepsArb({ rules: 1, trackers: 1, back: true }, 80), async (rule, steps) => {
          const { store, clock } = fresh();
          await replay(store, clock, [rule], steps, guardMs);
        }),
      );
    },
  );

  it.each(ALGORITHMS)(
    '%s: with afterLockout restart, a refusal starts a lockout that clears the count and reports its own length, fixed or escalating, as the model does',
    async (algorithm) => {
      const rule = fc.boolean().chain((escalating) => ruleArb(algorithm, 'r0', { lockout: true, escalating, restart: true }));
      await check(
        fc.asyncProperty(rule, stepsArb({ rules: 1, trackers: 2, back: true }), async (drawn, steps) => {
          const { store, clock } = fresh();
          await replay(store, clock, [drawn], steps, guardMs);
        }),
      );
    },
  );

  it('consumeAll starts a lockout only in the rules that refused, and charges nothing anywhere, as the model does', async () => {
    const rules = fc.tuple(...[0, 1, 2].map((i) => fc.constantFrom(...ALGORITHMS).chain((algorithm) => ruleArb(algorithm, `r${i}`, { lockout: i < 2, escalating: i === 1 }))));
    await check(
      fc.asyncProperty(rules, stepsArb({ rules: 3, trackers: 2, consumeAll: true, back: true }), async (drawn, steps) => {
        const { store, clock } = fresh();
        await replay(store, clock, drawn, steps, guardMs);
      }),
    );
  });
});
