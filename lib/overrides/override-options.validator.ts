import { MAX_EXACT_UNITS, reducedInterval } from '../algorithms/exact-instant.js';
import type { RateLimitOverrideOptions, StoredOverride } from '../interfaces/override.interface.js';
import type { RateLimitRule } from '../interfaces/rule.interface.js';
import { MAX_SLIDING_LOG_LIMIT, MAX_WINDOW_MS } from '../rules/define-rule.js';
import { parseDuration } from '../rules/duration.parser.js';
import { RateLimitConfigError } from '../rules/rate-limit-config.error.js';

const KNOWN_FIELDS = new Set(['limit', 'block', 'ttlMs', 'reason']);
const MAX_REASON = 200;

/** An override's options checked against its rule, each error naming the option (`override.limit`, ...). */
export function checkOverride(rule: RateLimitRule, options: RateLimitOverrideOptions): StoredOverride {
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new RateLimitConfigError('override', options, 'an object: { limit } or { block: true }, with ttlMs and an optional reason');
  }
  for (const field of Object.keys(options)) {
    if (!KNOWN_FIELDS.has(field)) throw new RateLimitConfigError(`override.${field}`, (options as unknown as Record<string, unknown>)[field], `one of the fields ${[...KNOWN_FIELDS].join(', ')}`);
  }
  const { limit, block, reason } = options;
  if (block !== undefined && block !== true) throw new RateLimitConfigError('override.block', block, 'true, or no "block" (use "limit" to change the limit)');
  if ((limit === undefined) === (block === undefined)) {
    throw new RateLimitConfigError('override.limit', limit, `exactly one of "limit" (a positive integer) and "block: true"${block ? ', not both' : ''}`);
  }
  const ttlMs = parseDuration(options.ttlMs, 'override.ttlMs');
  if (!Number.isSafeInteger(ttlMs) || ttlMs > MAX_WINDOW_MS) {
    throw new RateLimitConfigError('override.ttlMs', options.ttlMs, `a whole number of ms from 1 to ${MAX_WINDOW_MS} (366 days)`);
  }
  if (reason !== undefined && (typeof reason !== 'string' || reason.length > MAX_REASON)) {
    throw new RateLimitConfigError('override.reason', reason, `a string of up to ${MAX_REASON} characters`);
  }
  const stored: StoredOverride = { ttlMs, ...(reason === undefined ? {} : { reason }) };
  if (limit === undefined) return stored;
  const max = maxLimit(rule);
  if (typeof limit !== 'number' || !Number.isSafeInteger(limit) || limit < 1 || limit > max) {
    throw new RateLimitConfigError('override.limit', limit, `an integer from 1 to ${max}, the most the ${rule.algorithm} rule "${rule.name}" can count`);
  }
  return { ...stored, limit };
}

/** The largest limit the rule's algorithm can decide exactly: the bounds `defineRule` puts on a rule's own limit. */
function maxLimit(rule: RateLimitRule): number {
  switch (rule.algorithm) {
    case 'fixed-window':
      return rule.windowMs * 1000 - 1;
    case 'sliding-log':
      return MAX_SLIDING_LOG_LIMIT;
    case 'token-bucket':
      return Math.floor(MAX_EXACT_UNITS / reducedInterval(rule.windowMs * 1000, rule.refill)[0]);
    default:
      return Number.MAX_SAFE_INTEGER;
  }
}
