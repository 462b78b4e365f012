/** Injection token of the validated module options (`RateLimitSettings`). */
export const RATE_LIMIT_SETTINGS = Symbol('RATE_LIMIT_SETTINGS');
/** Injection token of the `RateLimitStore` the module decides with. */
export const RATE_LIMIT_STORE = Symbol('RATE_LIMIT_STORE');
/** Metadata key of `@RateLimit` entries on a class or a handler. */
export const RATE_LIMIT_METADATA = 'nestjs-redis-rate-limit:rules';
/** Metadata key of `@SkipRateLimit`. */
export const SKIP_RATE_LIMIT_METADATA = 'nestjs-redis-rate-limit:skip';
/** Injection token of the module's `RateLimitMetrics` (a no-op without prom-client). */
export const RATE_LIMIT_METRICS = Symbol('RATE_LIMIT_METRICS');
/** Injection token of the `RejectionAudit`, or null when the audit is off. */
export const RATE_LIMIT_AUDIT = Symbol('RATE_LIMIT_AUDIT');
/** Injection token of the `LeaseStore` that holds the leases of concurrency rules. */
export const RATE_LIMIT_LEASE_STORE = Symbol('RATE_LIMIT_LEASE_STORE');
/** Injection token, present (true) when `globalInterceptor` registered `RateLimitInterceptor` for every handler. */
export const RATE_LIMIT_GLOBAL_INTERCEPTOR = Symbol('RATE_LIMIT_GLOBAL_INTERCEPTOR');
/** Injection token of the parts `openTelemetry` turns on (metrics, span attributes), or null when it is off. */
export const RATE_LIMIT_OPEN_TELEMETRY = Symbol('RATE_LIMIT_OPEN_TELEMETRY');
