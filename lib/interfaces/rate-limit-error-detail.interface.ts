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
  /** The same as `used`, under throttler's name. */
  readonly totalHits: number;
}
