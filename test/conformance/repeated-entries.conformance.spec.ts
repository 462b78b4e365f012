import fc from 'fast-check';
import { defineRule, RateLimitCostError, type RateLimitAlgorithm, type RateLimitRule, type RuleKey } from '../../lib/index.js';
import { STORE_KINDS, useStores, type StoreUnderTest } from '../support/stores.js';

// Entries of one consumeAll that name the same tracker under the same rule share one state key: they are decided
// together (their costs add up, all-or-nothing), and no call reports more admitted than it charged.
const ALGORITHMS: RateLimitAlgorithm[] = ['sliding-log', 'sliding-window', 'fixed-window', 'token-bucket', 'gcra'];
const cases = STORE_KINDS.flatMap((kind) => ALGORITHMS.map((algorithm) => [kind, algorithm] as const));

/** Units held now: the clock does not move inside these tests, so nothing has leaked out or refilled. */
async function charged({ store }: StoreUnderTest, key: string, rule: RateLimitRule): Promise<number> {
  return rule.limit - (await store.peek(key, rule, 0)).remaining;
}

describe.each(cases)('repeated entries in one consumeAll on the %s store, %s', (kind, algorithm) => {
  const get = useStores(kind);
  const rule = defineRule({ algorithm, limit: 5, window: '1m' }, 'sms');
  const repeat = (key: string, times: number, cost?: number): RuleKey[] => Array.from({ length: times }, () => ({ key, rule, cost }));

  it('refuses 100 entries of one phone under a limit of 5 with a RateLimitCostError, charging nothing', async () => {
    const s = get();
    const call = s.store.consumeAll(repeat('+15550100', 100));
    await expect(call).rejects.toThrow(RateLimitCostError);
    await expect(s.store.consumeAll(repeat('+15550100', 100))).rejects.toThrow(/repeat tracker "\+15550100" under rule "sms" and add up to 100/);
    expect(await charged(s, '+15550100', rule)).toBe(0);
  });

  it('refuses 3 entries adding up to 5 units when 1 of the 5 is already used, and charges nothing', async () => {
    const s = get();
    await s.store.consume('k', rule);
    const result = await s.store.consumeAll([...repeat('k', 2, 2), ...repeat('k', 1, 1)]);
    expect(result.allowed).toBe(false);
    expect(result.decisions.map((d) => d.allowed)).toEqual([false, false, false]);
    expect(await charged(s, 'k', rule)).toBe(1);
  });

  it('admits 2 entries of cost 2 under a limit of 5 and charges 4', async () => {
    const s = get();
    const result = await s.store.consumeAll(repeat('k', 2, 2));
    expect(result.allowed).toBe(true);
    expect(await charged(s, 'k', rule)).toBe(4);
  });

  it('reports for every repeat the decision after the whole sum', async () => {
    const s = get();
    const result = await s.store.consumeAll(repeat('k', 2, 2));
    expect(result.decisions).toHaveLength(2);
    expect(result.decisions[0]).toMatchObject({ allowed: true, remaining: 1 });
    expect(result.decisions[1]).toEqual(result.decisions[0]);
    expect(result.decisions[1]).not.toBe(result.decisions[0]);
  });

  it('keeps the other entries in place and charges none of them when the repeats refuse', async () => {
    const s = get();
    const other = defineRule({ algorithm, limit: 5, window: '1m' }, 'other');
    await s.store.consume('k', rule, 2);
    const result = await s.store.consumeAll([{ key: 'k', rule, cost: 2 }, { key: 'k', rule: other }, { key: 'k', rule, cost: 2 }]);
    expect(result.allowed).toBe(false);
    expect(result.decisions.map((d) => d.allowed)).toEqual([false, true, false]);
    expect(await charged(s, 'k', other)).toBe(0);
    expect(await charged(s, 'k', rule)).toBe(2);
  });

  it('decides repeats of trackers that live on different cluster slots', async () => {
    const s = get();
    await s.store.consume('alice', rule);
    const call = (cost: number): RuleKey[] => [{ key: 'alice', rule, cost }, { key: 'bob', rule, cost }, { key: 'alice', rule, cost }];
    expect((await s.store.consumeAll(call(2))).allowed).toBe(true);
    expect([await charged(s, 'alice', rule), await charged(s, 'bob', rule)]).toEqual([5, 2]);
    const refused = await s.store.consumeAll(call(1));
    expect(refused.decisions.map((d) => d.allowed)).toEqual([false, true, false]);
    expect([await charged(s, 'alice', rule), await charged(s, 'bob', rule)]).toEqual([5, 2]);
  });

  it('refuses repeats of one rule name under two definitions, naming the rule and the tracker', async () => {
    const s = get();
    const looser = defineRule({ algorithm, limit: 50, window: '1m' }, 'sms');
    const call = s.store.consumeAll([{ key: 'k', rule }, { key: 'k', rule: looser }]);
    await expect(call).rejects.toThrow(/rule "sms".*tracker "k".*different definitions/);
    expect(await charged(s, 'k', rule)).toBe(0);
  });

  it('refuses repeats of one rule name under two algorithms, naming the rule and the tracker', async () => {
    const s = get();
    const other = defineRule({ algorithm: algorithm === 'gcra' ? 'fixed-window' : 'gcra', limit: 5, window: '1m' }, 'sms');
    await expect(s.store.consumeAll([{ key: 'k', rule }, { key: 'k', rule: other }])).rejects.toThrow(/rule "sms".*tracker "k".*different definitions/);
    expect(await charged(s, 'k', rule)).toBe(0);
  });

  it('never charges other than the units it reports admitted, whatever the repeats', async () => {
    const s = get();
    const entry = fc.record({ key: fc.constantFrom('a', 'b'), cost: fc.integer({ min: 1, max: 3 }) });
    let run = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(fc.array(entry, { minLength: 1, maxLength: 4 }), { minLength: 1, maxLength: 6 }), async (calls) => {
        // Fresh trackers per run: the clock stands still, so state would otherwise carry over.
        const id = `${run++}`;
        const admitted = new Map<string, number>([['a', 0], ['b', 0]]);
        for (const call of calls) {
          const sum = (key: string) => call.filter((e) => e.key === key).reduce((n, e) => n + e.cost, 0);
          if (sum('a') > rule.limit || sum('b') > rule.limit) continue; // RateLimitCostError, tested above
          const result = await s.store.consumeAll(call.map((e) => ({ key: e.key + id, rule, cost: e.cost })));
          expect(result.decisions.every((d) => d.allowed)).toBe(result.allowed);
          if (result.allowed) for (const key of admitted.keys()) admitted.set(key, admitted.get(key)! + sum(key));
        }
        for (const [key, units] of admitted) expect(await charged(s, key + id, rule)).toBe(units);
      }),
      { numRuns: kind === 'memory' ? 100 : 25 },
    );
  });
});
