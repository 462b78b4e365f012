import type { EnvSource } from './config/env.js';

/**
 * How `AppModule.register()` can be told apart from production: tests pass their own variables (their clock comes
 * from the testing kit, `nestjs-redis-rate-limit/testing`, which needs nothing of the app).
 */
export interface SampleAppOptions {
  /**
   * The variables to read instead of `process.env`; `sample-app/.env` is then not read either, so a
   * developer's `.env` (or a REDIS_URL in the shell) cannot change what a test runs against.
   */
  env?: EnvSource;
}
