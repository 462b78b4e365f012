export type { Decision, MultiDecision } from './interfaces/decision.interface.js';
export type { Clock } from './interfaces/clock.interface.js';
export type { AfterLockout, Duration, EscalatingLockoutOptions, FailurePolicy, LocalBudgetOptions, RateLimitAlgorithm, RateLimitRule, RateLimitRuleOptions, WindowAlgorithm } from './interfaces/rule.interface.js';
export type { RateLimitStore, RuleKey } from './interfaces/store.interface.js';
export type { BudgetGrant, BudgetStore } from './interfaces/budget.interface.js';
export type { IoRedisClientLike, IoRedisClusterLike, NodeRedisClientLike, NodeRedisClusterLike, NodeRedisSentinelLike, RedisClientLike } from './interfaces/redis-client.interface.js';
export type {
  RateLimitClusterOptions,
  RateLimitConfigReader,
  RateLimitDecisionEvent,
  RateLimitDecoratorOptions,
  RateLimitHeadersMode,
  RateLimitKey,
  RateLimitKeyFunction,
  RateLimitMode,
  RateLimitModuleExtras,
  RateLimitModuleOptions,
  RateLimitNamedPolicyOptions,
  RateLimitPolicyOptions,
  RateLimitRulesConfig,
  RateLimitSkipIf,
  RefusedEvents,
  Resolvable,
} from './interfaces/rate-limit-options.interface.js';
export type { KeySpec, RateLimitPolicy } from './interfaces/rate-limit-policy.interface.js';

export { RateLimitModule } from './rate-limit.module.js';
export { MODULE_OPTIONS_TOKEN as RATE_LIMIT_MODULE_OPTIONS } from './rate-limit.module-definition.js';
export type { RateLimitOptionsFactory } from './rate-limit.module-definition.js';
export { RATE_LIMIT_AUDIT, RATE_LIMIT_LEASE_STORE, RATE_LIMIT_METRICS, RATE_LIMIT_SETTINGS, RATE_LIMIT_STORE } from './interfaces/rate-limit.constants.js';
export { RateLimitGuard, type RateLimitRejection } from './rate-limit.guard.js';
export { RateLimitService, type RuleRef, type RuleRefEntry } from './rate-limit.service.js';
export { RateLimitWaitTimeoutError } from './waiting/rate-limit-wait-timeout.error.js';
export type { RateLimitWaitOptions } from './waiting/wait-options.js';
export type { RateLimitOverrides } from './overrides/rate-limit.overrides.js';
export type { OverrideSnapshot, OverrideStore, RateLimitOverride, RateLimitOverrideOptions, StoredOverride } from './interfaces/override.interface.js';
export { RateLimitExceededException, type RateLimitExceededBody } from './http/rate-limit.exception.js';
export { RateLimitExceptionFilter } from './http/rate-limit-exception.filter.js';
export { RateLimitInterceptor } from './http/rate-limit.interceptor.js';
export type { RateLimitErrorDetail } from './interfaces/rate-limit-error-detail.interface.js';
export { RateLimit } from './decorators/rate-limit.decorator.js';
export { SkipRateLimit } from './decorators/skip-rate-limit.decorator.js';
export { RateLimitPolicies, type ConfigReload } from './config/rate-limit.policies.js';
export { RateLimitConfigWatcher } from './config/config.watcher.js';
export type { RateLimitSettings } from './interfaces/rate-limit-settings.interface.js';
export type { RequestResponse } from './http/execution-context.adapter.js';
export { clientIp, groupIp } from './http/client-ip.js';
export { routeKey } from './http/route.key.js';
export { compileRules as validateRulesConfig } from './config/policy.compiler.js';
export { ResilientStore, RateLimitTimeoutError, type ResilientStoreOptions } from './resilience/resilient.store.js';
export { CircuitBreaker } from './resilience/circuit-breaker.js';
export type { CircuitBreakerOptions, CircuitState } from './interfaces/circuit-breaker.interface.js';
export { LocalBlockCache } from './resilience/local-block.cache.js';
export type { RateLimitMetrics, RateLimitMetricsOptions } from './interfaces/metrics.interface.js';
export type { RateLimitOpenTelemetryOptions } from './interfaces/open-telemetry.interface.js';
export type { RejectionAudit, RejectionRecord } from './observability/rejection.audit.js';
export type { RejectionAuditOptions } from './interfaces/audit.interface.js';
export { safeClientOptions } from './stores/redis/clients/ioredis.factory.js';
export type { RuleOutcome } from './http/rate-limit.headers.js';
export { RateLimitEventRefused, type RefusedEventOutcome } from './rpc/refused-event.handler.js';
export { GRPC_RETRY_AFTER_MS, type RpcRateLimitError } from './rpc/rpc-refusal.js';

export { defineRule, maxCost } from './rules/define-rule.js';
export { MAX_SLIDING_LOG_LIMIT, MAX_WINDOW_MS } from './rules/define-rule.js';
export { parseDuration } from './rules/duration.parser.js';
export { RateLimitConfigError } from './rules/rate-limit-config.error.js';
export { RateLimitResolveError } from './config/resolvable-policy.compiler.js';
export { ruleKeys, trackerSegment } from './keys/key.builder.js';
export { MemoryStore, type MemoryStoreOptions } from './stores/memory/memory.store.js';
export { RateLimitDeadlineError, RedisStore, type RedisStoreOptions } from './stores/redis/redis.store.js';
export { RateLimitCostError } from './stores/rate-limit-cost.error.js';
export type { ThrottleReply } from './stores/gcra.throttle.js';
export type { Lease, LeaseDecision, LeaseHandle, LeaseResult, LeaseStore } from './interfaces/lease-store.interface.js';
export { MemoryLeaseStore, type MemoryLeaseStoreOptions } from './stores/leases/memory-lease.store.js';
export { RedisLeaseStore, type RedisLeaseStoreOptions } from './stores/leases/redis-lease.store.js';
export { ResilientLeaseStore, type ResilientLeaseStoreOptions } from './resilience/resilient-lease.store.js';
export { DEFAULT_LEASE_MS, MIN_LEASE_MS } from './rules/define-rule.js';
