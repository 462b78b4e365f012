/**
 * `waitToConsume` gave up before sleeping: the rules need a wait that ends past its `maxWaitMs`. Nothing was taken.
 */
export class RateLimitWaitTimeoutError extends Error {
  override readonly name = 'RateLimitWaitTimeoutError';

  constructor(
    /** The wait the rules reported, in ms from now: at least this long was needed (more for a call queued behind others). */
    readonly retryAfterMs: number,
    /** The call's `maxWaitMs`. */
    readonly maxWaitMs: number,
    /** What was left of `maxWaitMs` when the call gave up, in ms. */
    readonly leftMs: number,
  ) {
    super(`Rate limit wait past maxWaitMs (${maxWaitMs} ms): the rules need ${Math.ceil(retryAfterMs)} ms more, ${Math.max(0, Math.floor(leftMs))} ms were left`);
  }
}
