import { defineRule, type RateLimitAlgorithm } from '../../lib/index.js';
import { ALGORITHM_DEFINITIONS } from '../../lib/algorithms/algorithm.registry.js';
import { durationTag } from '../../lib/algorithms/duration.tag.js';
import { ruleKeys } from '../../lib/keys/key.builder.js';

const tagOf = (algorithm: 'fixed-window' | 'token-bucket' | 'gcra', limit: number, window: number, extra: object = {}) =>
  ALGORITHM_DEFINITIONS[algorithm].stateTag(defineRule({ algorithm, limit, window, ...extra }, 'api'));

describe('state key tags', () => {
  it('write a duration in the largest whole unit, and µs without a unit', () => {
    expect([86_400_000_000, 3_600_000_000, 5_400_000_000, 60_000_000, 36_000_000, 3_600_000, 1_500, 1].map(durationTag)).toEqual([
      '1d', '1h', '90m', '1m', '36s', '3600ms', '1500', '1',
    ]);
  });

  it('name the fixed window by its window and token bucket and GCRA by their exact interval', () => {
    expect(tagOf('fixed-window', 10, 3_600_000)).toBe('fw1h');
    expect(tagOf('fixed-window', 10, 1_500)).toBe('fw1500ms');
    expect(tagOf('token-bucket', 10, 3_600_000)).toBe('tb6m');
    expect(tagOf('token-bucket', 10, 3_600_000, { refill: 1000 })).toBe('tb3600ms');
    expect(tagOf('gcra', 1000, 3_600_000)).toBe('gc3600ms');
    // An hour / 7 and 10 s / 600,000 (5/3 µs) are not whole µs.
    expect(tagOf('gcra', 7, 3_600_000)).toBe('gc1h_7');
    expect(tagOf('token-bucket', 600_000, 1_000)).toBe('tb5_3');
  });

  it('change with every change of what the state means, and only then', () => {
    const windows = [2, 7, 999, 1_000, 1_500, 60_000, 90_000, 3_600_000, 5_400_000, 86_400_000, 7 * 86_400_000];
    const limits = [1, 3, 7, 10, 60, 100, 997, 1_000];
    for (const algorithm of ['fixed-window', 'token-bucket', 'gcra'] as const) {
      const meaningOf = new Map<string, string>();
      for (const window of windows) {
        for (const limit of limits) {
          // Fixed window: the window; token bucket and GCRA: the interval window / limit, as a reduced fraction.
          const g = gcd(window * 1000, limit);
          const meaning = algorithm === 'fixed-window' ? String(window) : `${(window * 1000) / g}/${limit / g}`;
          const tag = tagOf(algorithm, limit, window);
          expect({ tag, meaning: meaningOf.get(tag) ?? meaning }).toEqual({ tag, meaning });
          meaningOf.set(tag, meaning);
        }
      }
      const meanings = new Set(meaningOf.values());
      expect(meanings.size).toBe(meaningOf.size);
    }
  });

  it("keep a 1-hour rule's state key for an IPv4 tracker within the 30 bytes Redis stores in a 32-byte block", () => {
    for (const algorithm of ['fixed-window', 'token-bucket', 'gcra'] as RateLimitAlgorithm[]) {
      for (const limit of [10, 100, 1000]) {
        const { state } = ruleKeys('rl', defineRule({ algorithm, limit, window: '1h' }, 'api'), '203.0.39.255');
        expect({ state, length: state.length <= 30 }).toEqual({ state, length: true });
      }
    }
  });
});

function gcd(a: number, b: number): number {
  while (b !== 0) [a, b] = [b, a % b];
  return a;
}
