import fc from 'fast-check';
import { defineRule, type RateLimitRule, type RateLimitStore } from '../../lib/index.js';
import { STORE_KINDS, useStores } from '../support/stores.js';
import { alignedFixedWindow, cellWindow, exactSlidingLog, tokenBucket, type Model } from './reference.models.js';

const START = 1_700_000_000_000;
/** Arrival sequences: gaps in ms (bursts of zeros included) and costs. */
const arrivals = fc.array(fc.record({ gap: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 50 }), fc.integer({ min: 0, max: 3000 })), cost: fc.integer({ min: 1, max: 3 }) }), {
  minLength: 1,
  maxLength: 60,
});

describe.each(STORE_KINDS)('on the %s store, for random arrivals', (kind) => {
  const get = useStores(kind);
  const runs = kind === 'memory' ? 300 : 60;

  /** Replays the arrivals through a fresh tracker and the model; returns the admitted times. */
  async function replay(store: RateLimitStore, set: (ms: number) => void, rule: RateLimitRule, model: Model, seq: { gap: number; cost: number }[], tracker: string) {
    let t = START;
    const admitted: { t: number; cost: number }[] = [];
    for (const { gap, cost } of seq) {
      t += gap;
      set(t);
      const decision = await store.consume(tracker, rule, cost);
      expect([t - START, cost, decision.allowed]).toEqual([t - START, cost, model(t, cost)]);
      if (decision.allowed) admitted.push({ t, cost });
    }
    return admitted;
  }

  let tracker = 0;
  const check = (rule: RateLimitRule, model: () => Model, extra?: (admitted: { t: number; cost: number }[]) => void) =>
    fc.assert(
      fc.asyncProperty(arrivals, async (seq) => {
        const { store, clock } = get();
        const admitted = await replay(store, (ms) => clock.set(ms), rule, model(), seq, `p${tracker++}`);
        extra?.(admitted);
      }),
      { numRuns: runs },
    );

  it('sliding-log admits exactly what the exact model admits, never more than limit in any window', async () => {
    const rule = defineRule({ algorithm: 'sliding-log', limit: 5, window: 1000 }, 'sl');
    await check(rule, () => exactSlidingLog(5, 1000), (admitted) => {
      for (const a of admitted) {
        const inWindow = admitted.filter((b) => b.t > a.t - 1000 && b.t <= a.t).reduce((s, b) => s + b.cost, 0);
        expect(inWindow).toBeLessThanOrEqual(5);
      }
    });
  });

  it('sliding-window admits what the cell model admits', async () => {
    const rule = defineRule({ algorithm: 'sliding-window', limit: 5, window: 1000, segments: 4 }, 'sw');
    await check(rule, () => cellWindow(5, 1000, 4));
  });

  it('fixed-window admits what the aligned-window model admits', async () => {
    const rule = defineRule({ algorithm: 'fixed-window', limit: 5, window: 1000 }, 'fw');
    await check(rule, () => alignedFixedWindow(5, 1000));
  });

  it('token-bucket admits what a real-valued token bucket admits', async () => {
    const rule = defineRule({ algorithm: 'token-bucket', limit: 5, window: 1000, refill: 4 }, 'tb');
    await check(rule, () => tokenBucket(5, 4, 1000));
  });

  it('gcra admits what the equivalent token bucket admits', async () => {
    const rule = defineRule({ algorithm: 'gcra', limit: 4, window: 1000, burst: 5 }, 'gcra');
    await check(rule, () => tokenBucket(5, 4, 1000));
  });
});
