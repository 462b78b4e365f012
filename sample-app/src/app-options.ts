import type { Clock } from 'nestjs-redis-rate-limit';
import type { EnvSource } from './config/env.js';

/** How `AppModule.register()` can be told apart from production: tests pass their own variables and clock. */
export interface SampleAppOptions {
  /**
   * The variables to read instead of `process.env`; `sample-app/.env` is then not read either, so a
   * developer's `.env` (or a REDIS_URL in the shell) cannot change what a test runs against.
   */
  env?: EnvSource;
  /** The rate limiter's time source (tests pass a ManualClock's `now` and move time by hand). */
  clock?: Clock;
}
