/**
 * Exact arithmetic for token bucket and GCRA, shared by their memory twins (the Lua has the same functions in
 * lua/includes/exact.lua). An emission interval of `window / rate` µs is a whole number of units of 1/d µs,
 * d = rate / gcd(window, rate), so every comparison is on integers whatever the rate: rounding the interval to
 * whole µs admitted 10,000 in 10 ms at 600k/s instead of 6,000.
 *
 * The stored instant (the bucket's full-at, GCRA's TAT) is F µs plus r/d µs, 0 <= r < d: a plain integer F when
 * r = 0 (always so when the interval is a whole number of µs), else the pair [F, r] (Redis: the string "F:r").
 * In memory the plain integer is the entry's `integer` (the value is then `INTEGER`).
 */
import { INTEGER, expiryAfter, type AlgorithmRule, type IntegerState, type MemoryEntry } from './algorithm.interface.js';
import { durationTag } from './duration.tag.js';

export type Instant = IntegerState | [us: number, fraction: number];

/**
 * Largest capacity (token bucket: limit × interval; GCRA: burst × interval) in units of 1/d µs: a third of
 * MAX_SAFE_INTEGER (about 3.0e15), since the largest number computed is under 3 × capacity (a full debt plus a
 * request of at most the capacity, plus one interval inside idiv), so every one is exact.
 */
export const MAX_EXACT_UNITS = Math.floor(Number.MAX_SAFE_INTEGER / 3);

/** ⌊a / b⌋ for integers a >= 0, b > 0, exact even where the float quotient rounds up to the next integer. */
export function idiv(a: number, b: number): number {
  let q = Math.floor(a / b);
  if (q * b > a) q--;
  else if ((q + 1) * b <= a) q++;
  return q;
}

/** ⌈a / b⌉ for integers a >= 0, b > 0. */
export function ceilDiv(a: number, b: number): number {
  const q = idiv(a, b);
  return q * b < a ? q + 1 : q;
}

function gcd(a: number, b: number): number {
  while (b !== 0) [a, b] = [b, a % b];
  return a;
}

/** `window / rate` µs as [units, d]: the interval is `units` units of 1/d µs, with units and d coprime integers. */
export function reducedInterval(windowUs: number, rate: number): [units: number, d: number] {
  const g = gcd(windowUs, rate);
  return [windowUs / g, rate / g];
}

/**
 * `window / rate` µs as a key tag: `units` µs as a duration tag (`6m`, `3600ms`), followed by `_d` when the
 * interval is not a whole number of µs (`1h_7`: an hour / 7).
 */
export function intervalTag(windowUs: number, rate: number): string {
  const [units, d] = reducedInterval(windowUs, rate);
  return d === 1 ? durationTag(units) : `${durationTag(units)}_${d}`;
}

/**
 * `window / rate` µs as [units, d] for a rule's parameters, worked out once per parameters object (the memory
 * store builds one per rule) rather than a gcd per decision.
 */
export function intervalOf(r: AlgorithmRule, rate: number): readonly [units: number, d: number] {
  return (r.interval ??= reducedInterval(r.window, rate));
}

/**
 * How far the entry's instant is ahead of now, in units of 1/d µs: 0 when it has passed (or there is none), and at
 * most `cap`. An instant further ahead (a rule whose capacity was lowered) is moved back to now + cap, so that the
 * lowered capacity applies at once and time runs from there: a clamp on read alone would never come down.
 */
export function unitsUntil(entry: MemoryEntry<Instant>, now: number, d: number, cap: number): number {
  const value = entry.value;
  if (value === undefined) return 0;
  const plain = value === INTEGER;
  const us = (plain ? entry.integer : value[0]) - now;
  if (us < 0) return 0;
  const units = us * d + (plain ? 0 : value[1]);
  // Compared in whole µs first, so that an instant far ahead is never multiplied by d.
  if (us < ceilDiv(cap, d) && units <= cap) return units;
  storeInstant(entry, now, cap, d);
  return cap;
}

/**
 * Stores in the entry the instant `units` units of 1/d µs after now, expiring then (in whole µs, rounded up, as
 * the Lua's PEXPIRE does).
 */
export function storeInstant(entry: MemoryEntry<Instant>, now: number, units: number, d: number): void {
  const us = idiv(units, d);
  const fraction = units - us * d;
  if (fraction === 0) {
    entry.integer = now + us;
    entry.value = INTEGER;
  } else entry.value = [now + us, fraction];
  entry.expiresAt = expiryAfter(now, fraction === 0 ? us : us + 1);
}
