import fc from 'fast-check';
import { defineRule, type WindowAlgorithm, type RateLimitRule } from '../../lib/index.js';

export const ALGORITHMS: WindowAlgorithm[] = ['sliding-log', 'sliding-window', 'fixed-window', 'token-bucket', 'gcra'];

/** Which rules to draw: with or without a lockout; token bucket and GCRA intervals (window/rate) in whole µs or not. */
export interface RuleDraw {
  lockout?: boolean;
  /** With `lockout`: the lockout escalates (a factor, a max from base to 30 × base, a forgetAfter), or stays fixed. */
  escalating?: boolean;
  fractionalIntervals?: boolean;
  /** With `lockout`: `afterLockout: 'restart'`, the lockout's end restarting the count. */
  restart?: boolean;
}

// Short windows (a few ms) put many boundaries in reach; long ones keep Redis TTLs far above a run's real time.
const windowMs = fc.oneof(fc.integer({ min: 1, max: 40 }), fc.integer({ min: 1000, max: 6000 }));
const blockMs = fc.oneof(fc.integer({ min: 1, max: 40 }), fc.integer({ min: 1000, max: 9000 }));
const limit = fc.integer({ min: 1, max: 6 });
/** An escalating lockout: fractional factors put the rounding to the ms in play; short and long forgetAfters both outcomes. */
const escalatingLockout = fc
  .tuple(blockMs, fc.constantFrom(1.25, 1.5, 2, 3), fc.constantFrom(1, 2, 5, 30), fc.oneof(fc.integer({ min: 1, max: 40 }), fc.integer({ min: 1000, max: 9000 }), fc.integer({ min: 20_000, max: 60_000 })))
  .map(([base, factor, times, forgetAfter]) => ({ base, factor, max: base * times, forgetAfter }));
type LockoutDraw = { blockMs: number } | { lockout: { base: number; factor: number; max: number; forgetAfter: number } };
/** Whether window/rate µs is a whole number of µs. */
const wholeInterval = (windowMs: number, rate: number) => (windowMs * 1000) % rate === 0;

/** A valid rule of `algorithm`, named `name`, with random limits, windows, segments, refills, bursts and lockouts. */
export function ruleArb(algorithm: WindowAlgorithm, name: string, draw: RuleDraw = {}): fc.Arbitrary<RateLimitRule> {
  const lockout: fc.Arbitrary<LockoutDraw> = !draw.lockout ? fc.constant({ blockMs: 0 }) : draw.escalating ? escalatingLockout.map((lockout) => ({ lockout })) : blockMs.map((b) => ({ blockMs: b }));
  const block = draw.restart ? lockout.map((b) => ({ ...b, afterLockout: 'restart' as const })) : lockout;
  const rateFits = ([w, rate]: [number, number]) => wholeInterval(w, rate) !== !!draw.fractionalIntervals;
  switch (algorithm) {
    case 'fixed-window':
    case 'sliding-log':
      return fc.tuple(limit, windowMs, block).map(([l, w, b]) => defineRule({ algorithm, limit: l, window: w, ...b }, name));
    case 'sliding-window':
      return fc
        .tuple(limit, fc.integer({ min: 2, max: 6 }), fc.oneof(fc.integer({ min: 1, max: 10 }), fc.integer({ min: 250, max: 1500 })), block)
        .map(([l, segments, cellMs, b]) => defineRule({ algorithm, limit: l, window: segments * cellMs, segments, ...b }, name));
    case 'token-bucket':
      return fc
        .tuple(windowMs, fc.integer({ min: 1, max: 12 }), limit, block)
        .filter(([w, refill]) => rateFits([w, refill]))
        .map(([w, refill, l, b]) => defineRule({ algorithm, limit: l, window: w, refill, ...b }, name));
    case 'gcra':
      return fc
        .tuple(windowMs, fc.integer({ min: 1, max: 12 }), limit, block)
        .filter(([w, count]) => rateFits([w, count]))
        .map(([w, count, burst, b]) => defineRule({ algorithm, limit: count, window: w, burst, ...b }, name));
  }
}

/**
 * How far the clock moves before an operation: a plain gap (bursts of 0 included), to the rule's next window or
 * cell boundary ± 1 ms, to the last decision's retryAfterMs or resetAfterMs ± 1 ms, or back by up to two windows.
 */
export type Gap =
  | { kind: 'ms'; ms: number }
  | { kind: 'boundary' | 'retry' | 'reset'; offset: -1 | 0 | 1 }
  | { kind: 'back'; ms: number };

const offset = fc.constantFrom(-1 as const, 0 as const, 1 as const);
export const gapArb = (back: boolean): fc.Arbitrary<Gap> =>
  fc.oneof(
    { weight: 3, arbitrary: fc.record({ kind: fc.constant('ms' as const), ms: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 20 }), fc.integer({ min: 0, max: 7000 })) }) },
    { weight: 2, arbitrary: fc.record({ kind: fc.constant('boundary' as const), offset }) },
    { weight: 2, arbitrary: fc.record({ kind: fc.constantFrom('retry' as const, 'reset' as const), offset }) },
    { weight: back ? 1 : 0, arbitrary: fc.record({ kind: fc.constant('back' as const), ms: fc.integer({ min: 1, max: 3000 }) }) },
  );

/** One entry of a consumeAll: which rule, which tracker, and its own cost when it has one. */
export interface EntryDraw {
  rule: number;
  tracker: number;
  cost?: number;
}

/** One step: the clock's move, then an operation on rule `rule` for tracker `tracker` (costs drawn as picks, scaled to the rule). */
export interface Step {
  gap: Gap;
  action: 'consume' | 'peek' | 'refund' | 'reset' | 'consumeAll';
  rule: number;
  tracker: number;
  cost: number;
  entries: EntryDraw[];
}

export interface StepDraw {
  rules: number;
  trackers: number;
  back?: boolean;
  consumeAll?: boolean;
}

const pick = fc.integer({ min: 0, max: 999 });

export function stepsArb(draw: StepDraw, maxLength = 40): fc.Arbitrary<Step[]> {
  const ruleIndex = fc.integer({ min: 0, max: draw.rules - 1 });
  const tracker = fc.integer({ min: 0, max: draw.trackers - 1 });
  const entry = fc.record({ rule: ruleIndex, tracker, cost: fc.option(pick, { nil: undefined }) });
  const step = fc.record({
    gap: gapArb(!!draw.back),
    action: fc.constantFrom(...(['consume', 'consume', 'consume', 'peek', 'refund', 'reset', ...(draw.consumeAll ? ['consumeAll', 'consumeAll'] : [])] as Step['action'][])),
    rule: ruleIndex,
    tracker,
    cost: pick,
    entries: fc.array(entry, { minLength: 1, maxLength: 4 }),
  });
  return fc.array(step, { minLength: 1, maxLength });
}
