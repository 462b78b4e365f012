import type { RateLimitRule } from '../interfaces/rule.interface.js';

/**
 * Escalating lockouts, the arithmetic both stores share (twin: `lockout_length` in lua/includes/driver.lua). The
 * lockout at level n lasts base × factor^n ms, rounded to the nearest ms, at most max. factor^n is taken as n
 * products, never `**` or Lua's `^`: a product of doubles is correctly rounded in V8 and in Lua alike, while `pow`
 * may differ in the last bit between them, and the two stores must agree to the millisecond.
 */

/** Most escalations from base to max that a rule may need: the loops below run at most this many times. */
export const MAX_LOCKOUT_LEVELS = 100;

/** The lockout's length in ms at `level` (from 0), for a base, factor and max in ms. */
export function lockoutLengthMs(baseMs: number, factor: number, maxMs: number, level: number): number {
  let length = baseMs;
  for (let i = 0; i < level && length < maxMs; i++) length *= factor;
  return Math.min(Math.floor(length + 0.5), maxMs);
}

/** `level`, or the first level whose length reaches max when it is further: the level a lockout key stores. */
export function cappedLockoutLevel(baseMs: number, factor: number, maxMs: number, level: number): number {
  let length = baseMs;
  let i = 0;
  for (; i < level && length < maxMs; i++) length *= factor;
  return i;
}

/** A rule's lockout length in ms at `level`, under the rule as it is now (a fixed lockout: `blockMs` at every level). */
export function ruleLockoutMs(rule: RateLimitRule, level: number): number {
  return rule.lockoutFactor === undefined ? rule.blockMs : lockoutLengthMs(rule.blockMs, rule.lockoutFactor, rule.lockoutMaxMs!, level);
}
