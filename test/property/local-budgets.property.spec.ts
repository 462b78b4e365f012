import fc from 'fast-check';
import { RateLimitPolicies, RateLimitService, type RateLimitRulesConfig } from '../../lib/index.js';
import { validateModuleOptions } from '../../lib/config/module-options.validator.js';
import { useStores, type StoreKind } from '../support/stores.js';

/**
 * Local budgets under random interleavings: several instances on one store consume, consume with a stacked rule,
 * refund, reload their rules and let their takes land (or not) in random order, on a clock moving by random steps.
 * However the takes and give-backs interleave with the decisions, no window admits more than the limit (a fixed
 * window: per window; a token bucket: never more than its capacity plus what it refilled since the start).
 */
const LIMIT = 12;
const WINDOW_MS = 1_000;
const rules = (generation: number): RateLimitRulesConfig => ({
  rules: {
    fw: { limit: LIMIT, window: WINDOW_MS, algorithm: 'fixed-window', localBudget: { maxUnits: 4, maxMs: 2_000 + generation } },
    tb: { limit: LIMIT, window: WINDOW_MS, algorithm: 'token-bucket', localBudget: { maxUnits: 4, maxMs: 2_000 + generation } },
    user: { limit: 1_000, window: WINDOW_MS, algorithm: 'fixed-window' },
  },
});

type Op =
  | { kind: 'consume'; at: number; cost: number }
  | { kind: 'stacked'; at: number; user: number }
  | { kind: 'refund'; at: number; cost: number }
  | { kind: 'reload'; at: number }
  | { kind: 'land' }
  | { kind: 'advance'; ms: number };

const INSTANCES = 3;
const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 10, arbitrary: fc.record({ kind: fc.constant('consume' as const), at: fc.nat(INSTANCES - 1), cost: fc.integer({ min: 1, max: 3 }) }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('stacked' as const), at: fc.nat(INSTANCES - 1), user: fc.nat(2) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('refund' as const), at: fc.nat(INSTANCES - 1), cost: fc.integer({ min: 1, max: 2 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('reload' as const), at: fc.nat(INSTANCES - 1) }) },
  { weight: 3, arbitrary: fc.constant({ kind: 'land' as const }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('advance' as const), ms: fc.oneof({ weight: 4, arbitrary: fc.integer({ min: 1, max: 40 }) }, { weight: 1, arbitrary: fc.integer({ min: 150, max: 600 }) }) }) },
);

describe.each(['redis', 'cluster'] satisfies StoreKind[])('local budgets on the %s store, for random interleavings', (kind) => {
  const get = useStores(kind);
  const runs = kind === 'redis' ? 60 : 20;

  it.each(['fw', 'tb'] as const)('never admit more than the %s rule allows', async (rule) => {
    let tracker = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 20, maxLength: 150 }), async (ops) => {
        const { store, clock, prefix } = get();
        const key = `hot${tracker++}`;
        const start = clock.ms;
        let generation = 0;
        const policies = Array.from({ length: INSTANCES }, () => new RateLimitPolicies(rules(generation)));
        const services = policies.map((p) => new RateLimitService(store, p, validateModuleOptions({ clock: clock.now, keyPrefix: prefix })));
        /** Net units admitted (admitted less refunded) per fixed window, and in all. */
        const perWindow = new Map<number, number>();
        let net = 0;
        const count = (units: number) => {
          const w = Math.floor(clock.ms / WINDOW_MS);
          perWindow.set(w, (perWindow.get(w) ?? 0) + units);
          net += units;
        };
        try {
          for (const o of ops) {
            if (o.kind === 'consume') {
              if ((await services[o.at].consume(key, rule, o.cost)).allowed) count(o.cost);
            } else if (o.kind === 'stacked') {
              const result = await services[o.at].consumeAll([{ key, rule }, { key: `u${o.user}`, rule: 'user' }]);
              if (result.allowed) count(1);
            } else if (o.kind === 'refund') {
              // Only units this window admitted go back (a refund gives back what a consume took).
              const w = Math.floor(clock.ms / WINDOW_MS);
              const cost = Math.min(o.cost, perWindow.get(w) ?? 0);
              if (cost > 0) {
                await services[o.at].refund(key, rule, cost);
                count(-cost);
              }
            } else if (o.kind === 'reload') {
              policies[o.at].replaceFromConfig(rules(++generation));
            } else if (o.kind === 'land') {
              await Promise.all(services.map((s) => s.budgets!.settled()));
            } else {
              clock.advance(o.ms);
            }
            if (rule === 'fw') {
              for (const units of perWindow.values()) expect(units).toBeLessThanOrEqual(LIMIT);
            } else {
              // A bucket of LIMIT refilling LIMIT per window: never more than it held and refilled.
              expect(net).toBeLessThanOrEqual(LIMIT + Math.floor(((clock.ms - start) * LIMIT) / WINDOW_MS));
            }
          }
        } finally {
          for (const s of services) s.budgets!.clear(false);
          await Promise.all(services.map((s) => s.budgets!.settled()));
        }
      }),
      { numRuns: runs },
    );
  });
});
