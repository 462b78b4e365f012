export { RateLimitTesting, type OverridableModuleBuilder, type ProviderSource, type RateLimitTestingOptions } from './rate-limit.testing.js';
export { RateLimitTestClock, TEST_CLOCK_START_MS } from './test.clock.js';
export { expectRateLimited, type RateLimitedExpectation, type RateLimitedResponse, type RateLimitField, type TestResponse } from './rate-limited.assertion.js';
export { RateLimitTestingError } from './rate-limit-testing.error.js';
