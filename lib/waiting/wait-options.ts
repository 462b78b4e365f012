import { RateLimitConfigError } from '../rules/rate-limit-config.error.js';

/** How `RateLimitService.waitToConsume` waits. */
export interface RateLimitWaitOptions {
  /** Units the call takes in every rule (a positive integer). @default 1 */
  cost?: number;
  /**
   * The longest the call may wait, in ms (0 = do not wait: admitted now or rejected). Once the rules report a wait
   * that ends past it, the call rejects at once with `RateLimitWaitTimeoutError`, without sleeping first.
   * @default no bound: it waits as long as the rules need
   */
  maxWaitMs?: number;
  /** Aborting it rejects the call with the signal's reason and drops its place in the queue. @default none */
  signal?: AbortSignal;
}

/** The options checked, with their defaults. */
export interface CheckedWaitOptions {
  cost: number;
  maxWaitMs: number;
  signal?: AbortSignal;
}

/** Checks the options of one call; a bad one throws `RateLimitConfigError` naming it, its value and what is allowed. */
export function checkWaitOptions(options: RateLimitWaitOptions | undefined): CheckedWaitOptions {
  if (options === undefined) return { cost: 1, maxWaitMs: Infinity };
  if (options === null || typeof options !== 'object') throw new RateLimitConfigError('waitToConsume options', options, 'an object { cost?, maxWaitMs?, signal? }');
  const { cost = 1, maxWaitMs = Infinity, signal } = options;
  if (!Number.isSafeInteger(cost) || cost < 1) throw new RateLimitConfigError('cost', cost, 'a positive integer');
  if (options.maxWaitMs !== undefined && !(typeof maxWaitMs === 'number' && Number.isFinite(maxWaitMs) && maxWaitMs >= 0)) {
    throw new RateLimitConfigError('maxWaitMs', maxWaitMs, 'a finite number of ms, 0 or more (leave it out to wait as long as the rules need)');
  }
  if (signal !== undefined && !(signal instanceof AbortSignal)) throw new RateLimitConfigError('signal', signal, 'an AbortSignal');
  return { cost, maxWaitMs, signal };
}
