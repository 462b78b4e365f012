import { Inject, Logger, Module, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { DiscoveryModule, ModulesContainer } from '@nestjs/core';
import { RateLimitConfigWatcher, readRulesConfig } from './config/config.watcher.js';
import { validateModuleOptions } from './config/module-options.validator.js';
import type { RateLimitSettings } from './interfaces/rate-limit-settings.interface.js';
import { guardRegistrationWarnings } from './config/guard-registrations.checker.js';
import { RateLimitConfigError } from './rules/rate-limit-config.error.js';
import { RateLimitPolicies } from './config/rate-limit.policies.js';
import { RateLimitRoutesChecker } from './decorators/route-rules.checker.js';
import { UpgradeRequestsWatcher } from './http/upgrade-requests.js';
import type { RateLimitModuleOptions } from './interfaces/rate-limit-options.interface.js';
import { createMetrics, NO_METRICS } from './observability/rate-limit.metrics.js';
import { loadOpenTelemetry, type OpenTelemetryParts } from './observability/open-telemetry.loader.js';
import { bothMetrics } from './observability/both.metrics.js';
import type { RateLimitMetrics } from './interfaces/metrics.interface.js';
import { RejectionAudit } from './observability/rejection.audit.js';
import { StoreOutageLog } from './observability/store-outage.log.js';
import { ThrottledLog } from './observability/throttled.logger.js';
import { RATE_LIMIT_AUDIT, RATE_LIMIT_LEASE_STORE, RATE_LIMIT_METRICS, RATE_LIMIT_OPEN_TELEMETRY, RATE_LIMIT_SETTINGS, RATE_LIMIT_STORE } from './interfaces/rate-limit.constants.js';
import { RateLimitGuard } from './rate-limit.guard.js';
import { ConfigurableModuleClass, MODULE_OPTIONS_TOKEN } from './rate-limit.module-definition.js';
import { RateLimitService } from './rate-limit.service.js';
import type { CircuitState } from './interfaces/circuit-breaker.interface.js';
import { ResilientStore } from './resilience/resilient.store.js';
import { MemoryStore } from './stores/memory/memory.store.js';
import type { RateLimitStore } from './interfaces/store.interface.js';
import { isPermanentRedisError } from './stores/redis/redis-connection.errors.js';
import { createStore, type StoreHandle } from './config/store.factory.js';
import { createLeaseStore } from './config/lease-store.factory.js';

const STORE_HANDLE = Symbol('RATE_LIMIT_STORE_HANDLE');
const STORE_OUTAGE = Symbol('RATE_LIMIT_STORE_OUTAGE');
const logger = new Logger('RateLimit');

/**
 * What a store failure is told to: the metric, under `metricPrefix` + the operation, and a throttled log line with
 * the connection's own explanation of the error when it has one.
 */
function storeErrorReporter(handle: StoreHandle, metrics: RateLimitMetrics, what: string, metricPrefix = '') {
  const errors = new ThrottledLog(logger);
  return (error: Error, op: string) => {
    metrics.storeError(`${metricPrefix}${op}`);
    errors.error(`Rate-limit ${what} failed (${op}): ${handle.connectionErrors?.explain(error) ?? error.message}; the failure policy decides meanwhile`);
  };
}

/** Redis behind the failure policy, timeout and circuit breaker; the memory store as it is. */
function resilientStore(handle: StoreHandle, settings: RateLimitSettings, metrics: RateLimitMetrics, outage: StoreOutageLog) {
  if (handle.store instanceof MemoryStore) return handle.store;
  let previous: CircuitState = 'closed';
  const store = new ResilientStore(handle.store, new MemoryStore({ keyPrefix: settings.keyPrefix, clock: settings.clock }), {
    timeoutMs: settings.timeoutMs,
    failurePolicy: settings.failurePolicy,
    circuitBreaker: settings.circuitBreaker,
    onError: storeErrorReporter(handle, metrics, 'store'),
    onCircuitChange: (state) => {
      metrics.circuit(state);
      // Said when the outage begins; a failed probe opens it again, every few seconds of a long outage, silently.
      if (state === 'open' && previous === 'closed') logger.warn('Circuit to the rate-limit store opened: deciding by the failure policy without calling it');
      if (state === 'open') outage.away();
      if (state === 'closed') outage.back();
      previous = state;
    },
  });
  return store;
}

/**
 * `RateLimitModule.forRoot(options)` / `forRootAsync({ imports, inject, useFactory | useClass | useExisting })`,
 * plus `isGlobal`, `globalGuard` and `globalInterceptor`. Invalid options stop the application at start-up, naming
 * the option.
 */
@Module({
  imports: [DiscoveryModule],
  providers: [
    { provide: RATE_LIMIT_SETTINGS, inject: [MODULE_OPTIONS_TOKEN], useFactory: validateModuleOptions },
    {
      provide: RateLimitPolicies,
      inject: [MODULE_OPTIONS_TOKEN, RATE_LIMIT_SETTINGS],
      useFactory: (options: RateLimitModuleOptions, settings: RateLimitSettings) =>
        new RateLimitPolicies(
          { defaultRule: options.defaultRule, rules: options.rules, mode: options.mode },
          readRulesConfig(settings),
          settings.config ? settings.configPath : '',
          settings.config,
        ),
    },
    {
      provide: STORE_HANDLE,
      inject: [MODULE_OPTIONS_TOKEN, RATE_LIMIT_SETTINGS],
      useFactory: (options: RateLimitModuleOptions, settings: RateLimitSettings) => createStore(options.store, settings),
    },
    {
      provide: RATE_LIMIT_OPEN_TELEMETRY,
      inject: [MODULE_OPTIONS_TOKEN, RATE_LIMIT_SETTINGS],
      useFactory: (options: RateLimitModuleOptions, settings: RateLimitSettings) => loadOpenTelemetry(settings.openTelemetry, options.openTelemetry),
    },
    {
      provide: RATE_LIMIT_METRICS,
      inject: [MODULE_OPTIONS_TOKEN, RATE_LIMIT_OPEN_TELEMETRY],
      useFactory: async (options: RateLimitModuleOptions, openTelemetry: OpenTelemetryParts | null) => {
        const prometheus = await createMetrics(options.metrics);
        // Without OpenTelemetry's metrics, the Prometheus object itself: a decision pays nothing for the option.
        if (!openTelemetry?.metrics) return prometheus;
        return prometheus === NO_METRICS ? openTelemetry.metrics : bothMetrics(prometheus, openTelemetry.metrics);
      },
    },
    { provide: STORE_OUTAGE, useFactory: () => new StoreOutageLog(logger) },
    { provide: RATE_LIMIT_STORE, inject: [STORE_HANDLE, RATE_LIMIT_SETTINGS, RATE_LIMIT_METRICS, STORE_OUTAGE], useFactory: resilientStore },
    {
      provide: RATE_LIMIT_LEASE_STORE,
      inject: [STORE_HANDLE, RATE_LIMIT_SETTINGS, RATE_LIMIT_STORE, RATE_LIMIT_METRICS],
      useFactory: (handle: StoreHandle, settings: RateLimitSettings, store: RateLimitStore, metrics: RateLimitMetrics) =>
        createLeaseStore(handle, settings, store, storeErrorReporter(handle, metrics, 'lease store', 'lease-')),
    },
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
    // WebSocket messages keyed by client IP need the proxy headers of their upgrade request.
    UpgradeRequestsWatcher,
  ],
  exports: [RATE_LIMIT_SETTINGS, RATE_LIMIT_STORE, RATE_LIMIT_LEASE_STORE, RATE_LIMIT_METRICS, RATE_LIMIT_AUDIT, RateLimitPolicies, RateLimitService, RateLimitGuard, RateLimitConfigWatcher],
})
export class RateLimitModule extends ConfigurableModuleClass implements OnApplicationBootstrap, OnApplicationShutdown {
  // Listeners this module put on the client, taken off at shutdown: a client passed in outlives the module, and
  // apps created one after another on one client (tests, workers) piled them up past Node's warning limit.
  private readonly listeners: [event: string, listener: (...args: any[]) => void][] = [];

  constructor(
    @Inject(STORE_HANDLE) private readonly handle: StoreHandle,
    @Inject(RATE_LIMIT_STORE) private readonly store: RateLimitStore,
    @Inject(RATE_LIMIT_SETTINGS) private readonly settings: RateLimitSettings,
    private readonly modules: ModulesContainer,
    @Inject(STORE_OUTAGE) private readonly outage: StoreOutageLog,
  ) {
    super();
  }

  /**
   * Connects a client the module created. If Redis is down the app starts anyway and the failure policy decides;
   * if Redis refuses the connection for a reason retrying cannot fix (password, ACL, database index), the start-up
   * stops with that reason, unless `startDegraded` is set.
   */
  async onApplicationBootstrap(): Promise<void> {
    // A second rate-limit guard on the same requests counts them twice, silently: said once, at start-up.
    for (const warning of guardRegistrationWarnings(this.modules, RateLimitModule, RateLimitGuard)) logger.warn(warning);
    const { client, owned, connectionErrors, description } = this.handle;
    logger.log(`Rate limits are kept in ${description}`);
    if (!client) return;
    // A client passed in is the app's: the module neither opens nor closes it. One never opened (node-redis needs
    // `await client.connect()`) or already closed would leave every decision to the failure policy, silently.
    if (!owned && !client.isOpen) {
      throw new RateLimitConfigError('store', `a ${client.library} client that is not open`, `a client that is connected when the application starts: call \`await client.connect()\` first (the module never opens or closes a client it is given)`);
    }
    const store = this.store;
    // A reconnected client is the best sign Redis is back: probe at once rather than at the end of the interval.
    // With the circuit open, the return is said when the probe closes it; with it closed, now.
    if (store instanceof ResilientStore) {
      this.listen('ready', () => {
        store.breaker.probeNow();
        if (store.breaker.state === 'closed') this.outage.back();
      });
    }
    if (!owned) return;
    const errors = new ThrottledLog(logger);
    // Without a listener, ioredis prints every connection error to the console itself.
    this.listen('error', (error: Error) => {
      this.outage.away();
      errors.error(`Redis connection error: ${error.message}${isPermanentRedisError(error) ? ' (retrying will not fix this)' : ''}`);
    });
    const seen = connectionErrors?.collect() ?? [];
    let failure: Error | undefined;
    try {
      await client.connect();
    } catch (error) {
      failure = error as Error;
    } finally {
      connectionErrors?.stopCollecting();
    }
    const permanent = seen.find(isPermanentRedisError);
    if (permanent) return this.refusedForGood(client, permanent);
    // The connect's own error only says "Connection is closed"; the client's 'error' event says why.
    if (failure) logger.warn(`Redis is unavailable at start-up (${seen.at(-1)?.message ?? failure.message}); the failure policy decides until it is back`);
  }

  private refusedForGood(client: NonNullable<StoreHandle['client']>, reason: Error): void {
    // A failed SELECT still ends 'ready', on database 0: that client must decide nothing.
    if (!this.settings.startDegraded || client.isReady) void client.close(true);
    if (!this.settings.startDegraded) {
      throw new RateLimitConfigError(
        'store',
        client.describe(),
        `a Redis that accepts the connection; it answered "${reason.message}", which retrying cannot fix: correct the password, ACL or database, or set startDegraded: true to start on the failure policy`,
      );
    }
    logger.error(`Redis refused the connection at start-up: ${reason.message}. Retrying will not fix this; startDegraded is set, so the failure policy decides until it is fixed`);
  }

  private listen(event: string, listener: (...args: any[]) => void): void {
    this.handle.client!.on(event, listener);
    this.listeners.push([event, listener]);
  }

  async onApplicationShutdown(): Promise<void> {
    const { client, owned } = this.handle;
    for (const [event, listener] of this.listeners.splice(0)) client?.off(event, listener);
    if (!client || !owned) return;
    await client.close();
  }
}
