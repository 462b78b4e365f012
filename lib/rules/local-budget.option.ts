import type { RateLimitAlgorithm, RateLimitRuleOptions } from '../interfaces/rule.interface.js';
import { parseDuration, parseInteger } from './duration.parser.js';
import { RateLimitConfigError } from './rate-limit-config.error.js';

/** A rule's `localBudget` as it is compiled: the largest take, and the longest an instance keeps one, in ms. */
export interface CompiledLocalBudget {
  readonly maxUnits: number;
  readonly maxMs: number;
}

/** The default largest take: this fraction of the rule's limit, so that 4 instances hold at most 4% of it. */
export const DEFAULT_BUDGET_SHARE = 0.01;
/** The default longest an instance keeps a take, in ms. */
export const DEFAULT_BUDGET_MAX_MS = 100;
/** The longest `maxMs`: units held longer mostly sit idle while other instances are refused. */
const MAX_BUDGET_MS = 60_000;
const FIELDS = new Set(['maxUnits', 'maxMs']);

/**
 * Compiles `localBudget` (true, false, their strings, or `{ maxUnits, maxMs }`). Refused where a unit spent after it
 * was taken would change what the rule guarantees: the sliding log counts each unit at the instant it is spent, and a
 * lockout could not stop units other instances hold. `capacity`: the most the rule admits at once (its limit, a
 * GCRA's burst).
 */
export function compileLocalBudget(options: RateLimitRuleOptions, algorithm: RateLimitAlgorithm, capacity: number, windowMs: number, hasLockout: boolean, path: string): CompiledLocalBudget | undefined {
  const value = options.localBudget;
  const field = `${path}.localBudget`;
  if (value === undefined || value === false || value === 'false') return undefined;
  const settings = value === true || value === 'true' ? {} : value;
  if (settings === null || typeof settings !== 'object' || Array.isArray(settings)) throw new RateLimitConfigError(field, value, 'true, false, or { maxUnits, maxMs }');
  for (const key of Object.keys(settings)) {
    if (!FIELDS.has(key)) throw new RateLimitConfigError(`${field}.${key}`, (settings as Record<string, unknown>)[key], `one of the fields ${[...FIELDS].join(', ')}`);
  }
  if (algorithm === 'sliding-log' || algorithm === 'concurrency') {
    const why = algorithm === 'sliding-log' ? 'the sliding log counts each unit at the instant it is spent, and a unit taken ahead would leave its window early' : 'a concurrency rule holds leases, not units of a window';
    throw new RateLimitConfigError(field, value, `false for the ${algorithm} algorithm (${why}): local budgets apply to sliding-window, fixed-window, token-bucket and gcra`);
  }
  if (hasLockout) {
    throw new RateLimitConfigError(field, value, 'false on a rule with a lockout: a lockout could not stop the units other instances hold; a locked-out key is already refused locally by the block cache');
  }
  let maxUnits: number;
  if (settings.maxUnits === undefined) {
    maxUnits = Math.floor(capacity * DEFAULT_BUDGET_SHARE);
    if (maxUnits < 2) {
      throw new RateLimitConfigError(field, value, `{ maxUnits } of 2 or more: by default a take is ${DEFAULT_BUDGET_SHARE * 100}% of the limit, and this rule's ${capacity} gives ${maxUnits}`);
    }
  } else {
    maxUnits = parseInteger(settings.maxUnits, `${field}.maxUnits`, 2, capacity);
  }
  const maxMs = settings.maxMs === undefined ? Math.min(DEFAULT_BUDGET_MAX_MS, windowMs) : parseDuration(settings.maxMs, `${field}.maxMs`);
  if (maxMs > MAX_BUDGET_MS) throw new RateLimitConfigError(`${field}.maxMs`, settings.maxMs, `a duration of at most ${MAX_BUDGET_MS} ms`);
  return Object.freeze({ maxUnits, maxMs });
}
