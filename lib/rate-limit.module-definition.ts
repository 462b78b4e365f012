import { ConfigurableModuleBuilder, type ConfigurableModuleOptionsFactory } from '@nestjs/common';
import { APP_GUARD, APP_INTERCEPTOR } from '@nestjs/core';
import type { RateLimitModuleExtras, RateLimitModuleOptions } from './interfaces/rate-limit-options.interface.js';
import { RateLimitInterceptor } from './http/rate-limit.interceptor.js';
import { RATE_LIMIT_GLOBAL_INTERCEPTOR } from './interfaces/rate-limit.constants.js';
import { RateLimitGuard } from './rate-limit.guard.js';

export const { ConfigurableModuleClass, MODULE_OPTIONS_TOKEN, OPTIONS_TYPE, ASYNC_OPTIONS_TYPE } = new ConfigurableModuleBuilder<RateLimitModuleOptions>()
  .setClassMethodName('forRoot')
  .setFactoryMethodName('createRateLimitOptions')
  .setExtras<RateLimitModuleExtras>({ isGlobal: true, globalGuard: false, globalInterceptor: false }, (definition, extras) => ({
    ...definition,
    global: extras.isGlobal,
    providers: [
      ...(definition.providers ?? []),
      ...(extras.globalGuard ? [{ provide: APP_GUARD, useClass: RateLimitGuard }] : []),
      // The guard asks for the token to know that the interceptor will take the leases it leaves (WebSocket calls).
      ...(extras.globalInterceptor
        ? [
            { provide: APP_INTERCEPTOR, useClass: RateLimitInterceptor },
            { provide: RATE_LIMIT_GLOBAL_INTERCEPTOR, useValue: true },
          ]
        : []),
    ],
    exports: [...(definition.exports ?? []), ...(extras.globalInterceptor ? [RATE_LIMIT_GLOBAL_INTERCEPTOR] : [])],
  }))
  .build();

/** What a `useClass` / `useExisting` options provider of `forRootAsync` implements. */
export type RateLimitOptionsFactory = ConfigurableModuleOptionsFactory<RateLimitModuleOptions, 'createRateLimitOptions'>;
