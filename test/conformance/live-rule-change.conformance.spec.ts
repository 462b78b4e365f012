import { defineRule, type WindowAlgorithm, type RateLimitRule, type RateLimitRuleOptions } from '../../lib/index.js';
import { useStores } from '../support/stores.js';

/**
 * A rule changed while its state lives (a config refresh keeps the rule's name): whatever the algorithm and the
 * field changed, state written under the old rule is either read correctly or dropped, so no reported wait ever
 * exceeds what the new rule can produce by itself (its window; token bucket and GCRA: the time to refill from
 * empty) plus its lockout, and waiting the reported retryAfterMs is enough.
 */
type Options = Partial<RateLimitRuleOptions>;
const BASE: Record<WindowAlgorithm, Options> = {
  'sliding-log': { limit: 5, window: 1000 },
  'sliding-window': { limit: 5, window: 1000, segments: 10 },
  'fixed-window': { limit: 5, window: 1000 },
  'token-bucket': { limit: 5, window: 1000, refill: 5 },
  gcra: { limit: 5, window: 1000, burst: 5 },
};
const ALGORITHMS = Object.keys(BASE) as WindowAlgorithm[];

/** Each change: a name, the old rule's extra fields and the new rule's, both over the algorithm's base. */
type Change = [name: string, before: Options, after: Options];
const COMMON: Change[] = [
  ['limit up', {}, { limit: 10 }],
  ['limit down', {}, { limit: 2 }],
  ['window up', {}, { window: 10_000 }],
  ['window down', {}, { window: 100 }],
  ['lockout on', {}, { blockMs: 2000 }],
  ['lockout off', { blockMs: 2000 }, { blockMs: 0 }],
  ['lockout shorter', { blockMs: 10_000 }, { blockMs: 2000 }],
  ['lockout longer', { blockMs: 2000 }, { blockMs: 10_000 }],
];
const OWN: Record<WindowAlgorithm, Change[]> = {
  'sliding-log': [],
  'sliding-window': [
    ['segments up', {}, { segments: 20 }],
    ['segments down', {}, { segments: 4 }],
    ['window and segments, same cell', {}, { window: 10_000, segments: 100 }],
  ],
  'fixed-window': [],
  'token-bucket': [
    ['refill up', {}, { refill: 50 }],
    ['refill down', {}, { refill: 1 }],
    ['limit down with refill kept', { limit: 20, refill: 5 }, { limit: 2, refill: 5 }],
  ],
  gcra: [
    ['burst up', {}, { burst: 10 }],
    ['burst down', {}, { burst: 2 }],
    ['limit and window, same period per request', {}, { limit: 50, window: 10_000 }],
  ],
};

/** The longest wait the rule can produce by itself, in ms: its window, or the time to refill from empty. */
function bound(rule: RateLimitRule): number {
  if (rule.algorithm === 'token-bucket') return Math.ceil((rule.limit * rule.windowMs) / rule.refill);
  if (rule.algorithm === 'gcra') return Math.ceil((rule.burst * rule.windowMs) / rule.limit);
  return rule.windowMs;
}

const cases = ALGORITHMS.flatMap((algorithm) => [...COMMON, ...OWN[algorithm], ...ALGORITHMS.filter((a) => a !== algorithm).map((a): Change => [`algorithm to ${a}`, {}, { algorithm: a }])].map(([name, before, after]) => [algorithm, name, before, after] as const));

describe.each(['memory', 'redis'] as const)('on the %s store, a rule changed while its state lives', (kind) => {
  const get = useStores(kind);

  it.each(cases)('%s, %s: every wait within the new rule\'s bound, and waiting it is enough', async (algorithm, _name, before, after) => {
    const { store, clock } = get();
    const old = defineRule({ algorithm, ...BASE[algorithm], ...before } as RateLimitRuleOptions, 'live');
    const algo = (after.algorithm ?? algorithm) as WindowAlgorithm;
    const next = defineRule({ algorithm: algo, ...BASE[algo], ...(after.algorithm ? {} : before), ...after } as RateLimitRuleOptions, 'live');
    // Under the old rule: a burst past the limit (and a lockout, when it has one), then a little more, 70 ms apart.
    for (let i = 0; i < 12; i++) {
      await store.consume('k', old, 1);
      clock.advance(i < 8 ? 0 : 70);
    }
    const max = bound(next) + next.blockMs;
    const within = (at: string, d: { retryAfterMs: number; resetAfterMs: number }) => {
      // Said as a sentence, so that a failure shows the waits themselves.
      const report = (retry: number, reset: number) => `${at}: retryAfterMs ${retry}, resetAfterMs ${reset}, bound ${max}`;
      expect(report(d.retryAfterMs, d.resetAfterMs)).toBe(report(Math.min(d.retryAfterMs, max), Math.min(d.resetAfterMs, max)));
    };
    within('peek right after the change', await store.peek('k', next, 1));
    for (let i = 0; i < 10; i++) {
      const cost = 1 + (i % 2);
      const d = await store.consume('k', next, cost);
      within(`consume #${i}`, d);
      if (!d.allowed) {
        clock.advance(d.retryAfterMs);
        const again = await store.consume('k', next, cost);
        expect([`consume #${i} after waiting ${d.retryAfterMs} ms`, again.allowed]).toEqual([`consume #${i} after waiting ${d.retryAfterMs} ms`, true]);
        within(`consume #${i} after waiting`, again);
      } else {
        clock.advance(13);
      }
    }
  });
});
