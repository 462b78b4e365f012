import type { Decision } from './decision.interface.js';

/**
 * What `errorMessage(context, detail)` receives: the refusing rule's decision (the one the client waits
 * longest for), plus what a message needs to say "5 of 5 attempts used" (as throttler's `ThrottlerLimitDetail`).
 */
export interface RateLimitErrorDetail extends Decision {
  /** The refusing rule's name. */
  readonly rule: string;
  /** Units used in the rule's window: `limit - remaining`. */
  readonly used: number;
  /**
   * `used` plus the refused request's units (its `cost`, 1 by default), as `@nestjs/throttler`'s `totalHits` counts
   * the refused hit too: a third request under a limit of 2 says 3 here and 2 in `used`. Nothing counted them: a
   * refused request charges nothing.
   */
  readonly totalHits: number;
}
