import { RateLimitTestingError } from './rate-limit-testing.error.js';

/**
 * Whether rate limiting is on, for one app under test. Switching it off refuses with NODE_ENV=production, so that
 * an app cannot ship with its limits off by a testing line left in.
 */
export class TestingSwitch {
  private on = true;

  get enabled(): boolean {
    return this.on;
  }

  disable(): void {
    refuseInProduction('disable()');
    this.on = false;
  }

  enable(): void {
    this.on = true;
  }
}

/** Throws when NODE_ENV says production: what the testing kit switches off must stay on there. */
export function refuseInProduction(what: string): void {
  if (process.env.NODE_ENV !== 'production') return;
  throw new RateLimitTestingError(
    `RateLimitTesting.${what} refuses to run with NODE_ENV=production: switching rate limits off is for tests only. ` +
      'Run your tests with NODE_ENV=test (or leave it unset), and keep RateLimitTesting out of the code you ship.',
  );
}
