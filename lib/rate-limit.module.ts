import { Inject, Logger, Module, type OnApplicationShutdown } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { RateLimitConfigWatcher, readRulesConfig } from './config/config.watcher.js';
import { validateModuleOptions, type RateLimitSettings } from './config/module-options.validator.js';
import { RateLimitPolicies } from './config/rate-limit.policies.js';
import type { RateLimitModuleOptions } from './interfaces/rate-limit-options.interface.js';
import { RateLimitRoutesChecker } from './decorators/route-rules.checker.js';
import { RATE_LIMIT_SETTINGS, RATE_LIMIT_STORE } from './rate-limit.constants.js';
import { RateLimitGuard } from './rate-limit.guard.js';
import { ConfigurableModuleClass, MODULE_OPTIONS_TOKEN } from './rate-limit.module-definition.js';
import { RateLimitService } from './rate-limit.service.js';
import { createStore, type StoreHandle } from './stores/store.factory.js';

const STORE_HANDLE = Symbol('RATE_LIMIT_STORE_HANDLE');

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
      useFactory: (options: RateLimitModuleOptions, settings: RateLimitSettings) => createStore(options.store, settings.keyPrefix, settings.clock),
    },
    { provide: RATE_LIMIT_STORE, inject: [STORE_HANDLE], useFactory: (handle: StoreHandle) => handle.store },
    RateLimitService,
    RateLimitGuard,
    RateLimitConfigWatcher,
    RateLimitRoutesChecker,
  ],
  exports: [RATE_LIMIT_SETTINGS, RATE_LIMIT_STORE, RateLimitPolicies, RateLimitService, RateLimitGuard, RateLimitConfigWatcher],
})
export class RateLimitModule extends ConfigurableModuleClass implements OnApplicationShutdown {
  constructor(@Inject(STORE_HANDLE) private readonly handle: StoreHandle) {
    super();
  }

  async onApplicationShutdown(): Promise<void> {
    try {
      await this.handle.close?.();
    } catch (error) {
      new Logger('RateLimit').warn(`Closing the Redis client failed: ${(error as Error).message}`);
    }
  }
}
