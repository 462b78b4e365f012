import { parseDuration, parseInteger } from './duration.parser.js';
import { RateLimitConfigError } from './rate-limit-config.error.js';
import type { FailurePolicy, RateLimitAlgorithm, RateLimitRule, RateLimitRuleOptions } from '../interfaces/rule.interface.js';

export const ALGORITHMS: readonly RateLimitAlgorithm[] = ['sliding-log', 'sliding-window', 'fixed-window', 'token-bucket', 'gcra'];
export const DEFAULT_ALGORITHM: RateLimitAlgorithm = 'sliding-window';
export const DEFAULT_SEGMENTS = 10;
const MAX_SEGMENTS = 1000;
const KNOWN_FIELDS = new Set(['limit', 'window', 'algorithm', 'segments', 'blockMs', 'refill', 'burst', 'failurePolicy']);
export const FAILURE_POLICIES: readonly FailurePolicy[] = ['open', 'closed', 'memory'];
const ONLY_FOR: Record<string, RateLimitAlgorithm> = { segments: 'sliding-window', refill: 'token-bucket', burst: 'gcra' };
const RULE_NAME = /^[A-Za-z0-9_.-]{1,64}$/;

/**
 * Validates a rule once, where it is defined, and returns it with every duration in milliseconds.
 * Strings from env vars (`"100"`, `"1m"`) are parsed; anything else invalid throws a `RateLimitConfigError`
 * naming the field (prefixed with `path`, e.g. `rules.login`) and the value.
 */
export function defineRule(options: RateLimitRuleOptions, name = 'default', path = name): RateLimitRule {
  if (typeof name !== 'string' || !RULE_NAME.test(name)) {
    throw new RateLimitConfigError(`${path}.name`, name, 'a name of 1-64 letters, digits, "_", "." or "-"');
  }
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new RateLimitConfigError(path, options, 'an object with at least "limit" and "window"');
  }
  for (const field of Object.keys(options)) {
    if (!KNOWN_FIELDS.has(field)) {
      throw new RateLimitConfigError(`${path}.${field}`, (options as unknown as Record<string, unknown>)[field], `one of the fields ${[...KNOWN_FIELDS].join(', ')}`);
    }
  }
  const algorithm = options.algorithm ?? DEFAULT_ALGORITHM;
  if (!ALGORITHMS.includes(algorithm)) {
    throw new RateLimitConfigError(`${path}.algorithm`, options.algorithm, `one of ${ALGORITHMS.join(', ')}`);
  }
  for (const [field, owner] of Object.entries(ONLY_FOR)) {
    const value = (options as unknown as Record<string, unknown>)[field];
    if (value !== undefined && owner !== algorithm) {
      throw new RateLimitConfigError(`${path}.${field}`, value, `no value: "${field}" applies to the ${owner} algorithm only, and this rule uses ${algorithm}`);
    }
  }

  const failurePolicy = options.failurePolicy;
  if (failurePolicy !== undefined && !FAILURE_POLICIES.includes(failurePolicy)) {
    throw new RateLimitConfigError(`${path}.failurePolicy`, failurePolicy, `one of ${FAILURE_POLICIES.join(', ')}`);
  }
  const limit = parseInteger(options.limit, `${path}.limit`, 1);
  const windowMs = parseDuration(options.window, `${path}.window`);
  const blockMs = parseDuration(options.blockMs ?? 0, `${path}.blockMs`, { allowZero: true });
  const windowUs = windowMs * 1000;

  let segments = 1;
  let refill = limit;
  let burst = limit;
  switch (algorithm) {
    case 'sliding-window':
      segments = parseInteger(options.segments ?? DEFAULT_SEGMENTS, `${path}.segments`, 2, MAX_SEGMENTS);
      if (windowMs % segments !== 0) {
        throw new RateLimitConfigError(`${path}.segments`, options.segments ?? segments, `a number of segments that divides the window of ${windowMs} ms into whole milliseconds`);
      }
      break;
    case 'fixed-window':
      // The window's end and its count share one integer in Redis (see lua/fixed-window.lua).
      if (limit >= windowUs) throw new RateLimitConfigError(`${path}.limit`, options.limit, `fewer than 1000 per millisecond of window (${windowUs})`);
      break;
    case 'token-bucket':
      refill = parseInteger(options.refill ?? limit, `${path}.refill`, 1, windowUs);
      break;
    case 'gcra':
      burst = parseInteger(options.burst ?? limit, `${path}.burst`, 1);
      if (limit > windowUs) throw new RateLimitConfigError(`${path}.limit`, options.limit, `at most 1000 per millisecond of window (${windowUs})`);
      break;
  }
  return Object.freeze({ name, algorithm, limit, windowMs, segments, blockMs, refill, burst, ...(failurePolicy ? { failurePolicy } : {}) });
}

/** The largest cost one request can ever be admitted with under this rule. */
export function maxCost(rule: RateLimitRule): number {
  return rule.algorithm === 'gcra' ? rule.burst : rule.limit;
}
