import { Inject, Logger, Module, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { APP_FILTER, DiscoveryModule } from '@nestjs/core';
import { RateLimitConfigWatcher, readRulesConfig } from './config/config.watcher.js';
import { validateModuleOptions, type RateLimitSettings } from './config/module-options.validator.js';
import { RateLimitConfigError } from './config/rate-limit-config.error.js';
import { RateLimitPolicies } from './config/rate-limit.policies.js';
import { RateLimitRoutesChecker } from './decorators/route-rules.checker.js';
import { RateLimitExceptionFilter } from './http/rate-limit-exception.filter.js';
import type { RateLimitModuleOptions } from './interfaces/rate-limit-options.interface.js';
import { createMetrics, type RateLimitMetrics } from './observability/rate-limit.metrics.js';
import { RejectionAudit } from './observability/rejection.audit.js';
import { ThrottledLog } from './observability/throttled.logger.js';
import { RATE_LIMIT_AUDIT, RATE_LIMIT_METRICS, RATE_LIMIT_SETTINGS, RATE_LIMIT_STORE } from './rate-limit.constants.js';
import { RateLimitGuard } from './rate-limit.guard.js';
import { ConfigurableModuleClass, MODULE_OPTIONS_TOKEN } from './rate-limit.module-definition.js';
import { RateLimitService } from './rate-limit.service.js';
import { ResilientStore } from './resilience/resilient.store.js';
import { MemoryStore } from './stores/memory.store.js';
import { createStore, type StoreHandle } from './stores/store.factory.js';

const STORE_HANDLE = Symbol('RATE_LIMIT_STORE_HANDLE');
const logger = new Logger('RateLimit');

/** Redis behind the failure policy, timeout and circuit breaker; the memory store as it is. */
function resilientStore(handle: StoreHandle, settings: RateLimitSettings, metrics: RateLimitMetrics) {
  if (handle.store instanceof MemoryStore) return handle.store;
  const errors = new ThrottledLog(logger);
  const store = new ResilientStore(handle.store, new MemoryStore({ keyPrefix: settings.keyPrefix, clock: settings.clock }), {
    timeoutMs: settings.timeoutMs,
    failurePolicy: settings.failurePolicy,
    circuitBreaker: settings.circuitBreaker,
    onError: (error, op) => {
      metrics.storeError(op);
      errors.error(`Rate-limit store failed (${op}): ${error.message}; the failure policy decides meanwhile`);
    },
    onCircuitChange: (state) => {
      metrics.circuit(state);
      if (state === 'open') logger.warn('Circuit to the rate-limit store opened: deciding by the failure policy without calling it');
      if (state === 'closed') logger.log('Circuit to the rate-limit store closed: deciding on the store again');
    },
  });
  // A reconnected client is the best sign Redis is back: probe at once rather than at the end of the interval.
  handle.client?.on('ready', () => store.breaker.probeNow());
  return store;
}

/**
 * `RateLimitModule.forRoot(options)` / `forRootAsync({ imports, inject, useFactory | useClass | useExisting })`,
 * plus `isGlobal` and `globalGuard`. Invalid options stop the application at start-up, naming the option.
 */
@Module({
  imports: [DiscoveryModule],
  providers: [
    { provide: RATE_LIMIT_SETTINGS, inject: [MODULE_OPTIONS_TOKEN], useFactory: validateModuleOptions },
    {
      provide: RateLimitPolicies,
      inject: [MODULE_OPTIONS_TOKEN, RATE_LIMIT_SETTINGS],
      useFactory: (options: RateLimitModuleOptions, settings: RateLimitSettings) =>
        new RateLimitPolicies({ defaultRule: options.defaultRule, rules: options.rules }, readRulesConfig(settings), settings.configPath),
    },
    {
      provide: STORE_HANDLE,
      inject: [MODULE_OPTIONS_TOKEN, RATE_LIMIT_SETTINGS],
      useFactory: (options: RateLimitModuleOptions, settings: RateLimitSettings) => createStore(options.store, settings),
    },
    { provide: RATE_LIMIT_METRICS, inject: [MODULE_OPTIONS_TOKEN], useFactory: (options: RateLimitModuleOptions) => createMetrics(options.metrics) },
    { provide: RATE_LIMIT_STORE, inject: [STORE_HANDLE, RATE_LIMIT_SETTINGS, RATE_LIMIT_METRICS], useFactory: resilientStore },
    {
      provide: RATE_LIMIT_AUDIT,
      inject: [STORE_HANDLE, RATE_LIMIT_SETTINGS],
      useFactory: (handle: StoreHandle, settings: RateLimitSettings) => {
        if (!settings.audit) return null;
        if (!handle.client) throw new RateLimitConfigError('audit', true, 'false unless "store" is Redis: the audit trail is a Redis Stream');
        const errors = new ThrottledLog(logger);
        return new RejectionAudit(handle.client, settings.audit.streamKey, settings.audit.maxLen, (e) => errors.error(`Writing the rejection audit failed: ${e.message}`));
      },
    },
    RateLimitService,
    RateLimitGuard,
    RateLimitConfigWatcher,
    RateLimitRoutesChecker,
    // Every 429 the library produces, from the guard or from business code, gets Retry-After and headers.
    { provide: APP_FILTER, useClass: RateLimitExceptionFilter },
  ],
  exports: [RATE_LIMIT_SETTINGS, RATE_LIMIT_STORE, RATE_LIMIT_METRICS, RATE_LIMIT_AUDIT, RateLimitPolicies, RateLimitService, RateLimitGuard, RateLimitConfigWatcher],
})
export class RateLimitModule extends ConfigurableModuleClass implements OnApplicationBootstrap, OnApplicationShutdown {
  constructor(@Inject(STORE_HANDLE) private readonly handle: StoreHandle) {
    super();
  }

  /** Connects a client the module created; if Redis is down, the app starts anyway and the failure policy decides. */
  async onApplicationBootstrap(): Promise<void> {
    const { client, owned } = this.handle;
    if (!client || !owned) return;
    const errors = new ThrottledLog(logger);
    // Without a listener, ioredis prints every connection error to the console itself.
    client.on('error', (error: Error) => errors.error(`Redis connection error: ${error.message}`));
    try {
      await client.connect();
    } catch (error) {
      logger.warn(`Redis is unavailable at start-up (${(error as Error).message}); the failure policy decides until it is back`);
    }
  }

  async onApplicationShutdown(): Promise<void> {
    const { client, owned } = this.handle;
    if (!client || !owned) return;
    // quit() waits for replies in flight; a client that never connected can only be disconnected.
    await client.quit().catch(() => client.disconnect());
  }
}
