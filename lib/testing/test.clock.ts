import type { Clock } from '../interfaces/clock.interface.js';
import type { Duration } from '../interfaces/rule.interface.js';
import { parseDuration } from '../rules/duration.parser.js';

/**
 * 2026-01-01T00:00:00Z: a test clock starts on a whole UTC day, so a fixed window of a second, a minute, an hour
 * or a day begins when the test does.
 */
export const TEST_CLOCK_START_MS = Date.UTC(2026, 0, 1);

/**
 * A clock that stands still until a test moves it. Both stores decide on it when the module is given its `now`
 * (as `RateLimitTesting.install` does): windows pass, buckets refill and lockouts end only when `advance` says so.
 */
export class RateLimitTestClock {
  private ms: number;

  /** @param startMs where the clock starts, in ms since the epoch. @default TEST_CLOCK_START_MS */
  constructor(startMs = TEST_CLOCK_START_MS) {
    if (!Number.isFinite(startMs) || startMs < 0) throw new RangeError(`A test clock starts at ms since the epoch (0 or more), not ${String(startMs)}`);
    this.ms = startMs;
  }

  /** The time the stores read, in ms since the epoch: pass it as the module's `clock` option. */
  readonly now: Clock = () => this.ms;

  /**
   * Moves time forward by `by`: milliseconds, or a duration string such as `'30s'`, `'1m'`, `'1h'`. Time never goes
   * back (the stores keep state that assumes it does not), so a negative or zero step is refused.
   */
  advance(by: Duration): void {
    this.ms += parseDuration(by, 'advance');
  }
}
