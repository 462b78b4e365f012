import type { ExecutionContext } from '@nestjs/common';
import type { RejectionAuditOptions } from './audit.interface.js';
import type { RateLimitOpenTelemetrySettings } from './open-telemetry.interface.js';
import type { CircuitBreakerOptions } from './circuit-breaker.interface.js';
import type { Clock } from './clock.interface.js';
import type { RateLimitErrorDetail } from './rate-limit-error-detail.interface.js';
import type { RateLimitConfigReader, RateLimitDecisionEvent, RateLimitHeadersMode, RateLimitModuleOptions } from './rate-limit-options.interface.js';
import type { CreatableClientLibrary } from './redis-client.interface.js';
import type { FailurePolicy } from './rule.interface.js';

/** The module options after validation, as the guard and the service read them. */
export interface RateLimitSettings {
  readonly keyPrefix: string;
  readonly headers: RateLimitHeadersMode;
  /** Whether the headers report shadow rules too. */
  readonly shadowHeaders: boolean;
  /** proxy-addr's trust function when `trustProxy` is set; otherwise the platform's own `ip` is used. */
  readonly trustProxy?: (address: string, hop: number) => boolean;
  readonly ipv6Subnet: number;
  readonly skip?: (context: ExecutionContext) => boolean | Promise<boolean>;
  readonly ignoreUserAgents?: readonly RegExp[];
  readonly getTracker?: RateLimitModuleOptions['getTracker'];
  readonly generateKey?: RateLimitModuleOptions['generateKey'];
  readonly errorMessage: string | ((context: ExecutionContext, detail: RateLimitErrorDetail) => string);
  readonly clock?: Clock;
  readonly config?: RateLimitConfigReader;
  readonly configPath: string;
  readonly refreshIntervalMs: number;
  readonly failurePolicy: FailurePolicy;
  readonly timeoutMs: number;
  /** The library of a client the module creates; unset: the first installed. */
  readonly clientLibrary?: CreatableClientLibrary;
  /** The Redis store's coalescing: false, or the most decisions per script call (unset: the client's default). */
  readonly coalesce: false | { maxBatch?: number };
  /** The Redis store calls its scripts as a function library where it can. */
  readonly functions: boolean;
  /** Start on the failure policy when Redis refuses the connection for a reason retrying cannot fix. */
  readonly startDegraded: boolean;
  readonly circuitBreaker: Required<CircuitBreakerOptions>;
  /** 0 = no block cache. */
  readonly blockCacheKeys: number;
  /** Estimated bytes the block cache may hold. */
  readonly blockCacheBytes: number;
  readonly onDecision?: (event: RateLimitDecisionEvent) => void;
  readonly onRejected?: (event: RateLimitDecisionEvent) => void;
  readonly audit?: Required<RejectionAuditOptions>;
  /** OpenTelemetry metrics and span attributes; undefined: off. */
  readonly openTelemetry?: RateLimitOpenTelemetrySettings;
}
