import { cappedLockoutLevel, lockoutLengthMs, MAX_LOCKOUT_LEVELS } from '../algorithms/lockout.escalation.js';
import type { AfterLockout, Duration, EscalatingLockoutOptions, RateLimitRuleOptions } from '../interfaces/rule.interface.js';
import { parseDuration } from './duration.parser.js';
import { RateLimitConfigError } from './rate-limit-config.error.js';

/**
 * A rule's lockout as it is compiled: the base (`blockMs`), the escalation fields only when it escalates, and
 * `lockoutRestartsCount` only for `afterLockout: 'restart'`.
 */
export interface CompiledLockout {
  blockMs: number;
  lockoutFactor?: number;
  lockoutMaxMs?: number;
  lockoutForgetMs?: number;
  lockoutRestartsCount?: true;
}

export const DEFAULT_LOCKOUT_FACTOR = 2;
/** The default `max` is the lockout after this many escalations (at most `maxMs`). */
export const DEFAULT_LOCKOUT_LEVELS = 10;
const FIELDS = new Set(['base', 'factor', 'max', 'forgetAfter']);

/**
 * Compiles `blockMs` or `lockout` (never both), each duration at most `maxMs` (366 days: instants in µs stay exact
 * in the scripts' doubles), and `afterLockout`. A lockout that cannot grow (factor 1, or max equal to base) compiles
 * as a fixed one.
 */
export function compileLockout(options: RateLimitRuleOptions, path: string, maxMs: number): CompiledLockout {
  const compiled = lockoutLength(options, path, maxMs);
  return afterLockout(options, path) === 'restart' ? { ...compiled, lockoutRestartsCount: true } : compiled;
}

const AFTER_LOCKOUT: readonly AfterLockout[] = ['resume', 'restart'];

/**
 * `afterLockout`, which needs a lockout to act on: a rule that sets it without `blockMs` or `lockout` is refused
 * rather than left to do nothing (a `blockMs` of 0, or a function of the request, may still turn one off).
 */
function afterLockout(options: RateLimitRuleOptions, path: string): AfterLockout {
  const value = options.afterLockout;
  if (value === undefined) return 'resume';
  if (!AFTER_LOCKOUT.includes(value)) {
    throw new RateLimitConfigError(`${path}.afterLockout`, value, `one of ${AFTER_LOCKOUT.join(', ')}: whether a lockout's end resumes the window's count or restarts it (a full budget, as throttler's blockDuration)`);
  }
  if (options.blockMs === undefined && options.lockout === undefined) {
    throw new RateLimitConfigError(`${path}.afterLockout`, value, 'no value without a lockout: it says what a lockout\'s end does, so set "blockMs" or "lockout" too');
  }
  return value;
}

function lockoutLength(options: RateLimitRuleOptions, path: string, maxMs: number): CompiledLockout {
  const { blockMs, lockout } = options;
  if (blockMs !== undefined && lockout !== undefined) {
    throw new RateLimitConfigError(`${path}.lockout`, lockout, `no value when "blockMs" is set too (${JSON.stringify(blockMs)}): "lockout" replaces "blockMs", give one of them`);
  }
  if (lockout === undefined || typeof lockout === 'number' || typeof lockout === 'string') {
    const field = lockout === undefined ? 'blockMs' : 'lockout';
    return { blockMs: boundedDuration(lockout ?? blockMs ?? 0, `${path}.${field}`, 0, maxMs) };
  }
  if (lockout === null || typeof lockout !== 'object' || Array.isArray(lockout)) {
    throw new RateLimitConfigError(`${path}.lockout`, lockout, 'a duration, or an object { base, factor?, max?, forgetAfter? }');
  }
  return escalating(lockout, `${path}.lockout`, maxMs);
}

function escalating(options: EscalatingLockoutOptions, path: string, maxMs: number): CompiledLockout {
  for (const field of Object.keys(options)) {
    if (!FIELDS.has(field)) throw new RateLimitConfigError(`${path}.${field}`, (options as unknown as Record<string, unknown>)[field], `one of the fields ${[...FIELDS].join(', ')}`);
  }
  const base = boundedDuration(options.base, `${path}.base`, 1, maxMs);
  const factor = parseFactor(options.factor ?? DEFAULT_LOCKOUT_FACTOR, `${path}.factor`);
  const max = options.max === undefined ? lockoutLengthMs(base, factor, maxMs, DEFAULT_LOCKOUT_LEVELS) : boundedDuration(options.max, `${path}.max`, base, maxMs);
  // Factor 1 is the fixed lockout the factor's own message offers: a max beyond base is what is wrong then.
  if (factor === 1 && max !== base) {
    throw new RateLimitConfigError(
      `${path}.max`,
      options.max,
      `base's ${base} ms, or no value: a factor of 1 keeps every lockout at base, so it never grows to max; a lockout that grows to ${max} ms needs a factor of ${leastFactor(base, max)} or more`,
    );
  }
  if (cappedLockoutLevel(base, factor, max, MAX_LOCKOUT_LEVELS + 1) > MAX_LOCKOUT_LEVELS) {
    throw new RateLimitConfigError(
      `${path}.factor`,
      options.factor,
      `a factor with which the lockout grows from base (${base} ms) to max (${max} ms) within ${MAX_LOCKOUT_LEVELS} escalations: ${leastFactor(base, max)} or more, or 1 for a fixed lockout of base (then leave max out)`,
    );
  }
  const forget = options.forgetAfter === undefined ? max : boundedDuration(options.forgetAfter, `${path}.forgetAfter`, 1, maxMs);
  if (factor === 1 || max === base) return { blockMs: base };
  return { blockMs: base, lockoutFactor: factor, lockoutMaxMs: max, lockoutForgetMs: forget };
}

/** The least factor, to 3 decimals, that grows a lockout from base to max within MAX_LOCKOUT_LEVELS escalations. */
function leastFactor(base: number, max: number): number {
  return Math.ceil(Math.pow(max / base, 1 / MAX_LOCKOUT_LEVELS) * 1000) / 1000;
}

/** A duration from `min` to `max` ms, the error naming the field, the value and both bounds. */
export function boundedDuration(value: Duration, field: string, min: number, max: number): number {
  const ms = parseDuration(value, field, { allowZero: min === 0 });
  if (ms < min || ms > max) {
    const days = max % 86_400_000 === 0 ? ` (${max / 86_400_000} days)` : '';
    throw new RateLimitConfigError(field, value, `a duration of ${min === 0 ? '0 or at most' : `${min} ms to`} ${max} ms${days}`);
  }
  return ms;
}

/** A finite number of 1 or more, as a number or a decimal string (from config or env vars). */
function parseFactor(value: unknown, field: string): number {
  const n = typeof value === 'string' && /^\s*\d+(\.\d+)?\s*$/.test(value) ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isFinite(n) || n < 1) {
    throw new RateLimitConfigError(field, value, 'a number of 1 or more: how many times longer each escalated lockout lasts (1 = a fixed lockout)');
  }
  return n;
}
