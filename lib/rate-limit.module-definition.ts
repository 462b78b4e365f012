import { ConfigurableModuleBuilder, type ConfigurableModuleOptionsFactory } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import type { RateLimitModuleExtras, RateLimitModuleOptions } from './interfaces/rate-limit-options.interface.js';
import { RateLimitGuard } from './rate-limit.guard.js';

export const { ConfigurableModuleClass, MODULE_OPTIONS_TOKEN, OPTIONS_TYPE, ASYNC_OPTIONS_TYPE } = new ConfigurableModuleBuilder<RateLimitModuleOptions>()
  .setClassMethodName('forRoot')
  .setFactoryMethodName('createRateLimitOptions')
  .setExtras<RateLimitModuleExtras>({ isGlobal: true, globalGuard: false }, (definition, extras) => ({
    ...definition,
    global: extras.isGlobal,
    providers: [...(definition.providers ?? []), ...(extras.globalGuard ? [{ provide: APP_GUARD, useClass: RateLimitGuard }] : [])],
  }))
  .build();

/** What a `useClass` / `useExisting` options provider of `forRootAsync` implements. */
export type RateLimitOptionsFactory = ConfigurableModuleOptionsFactory<RateLimitModuleOptions, 'createRateLimitOptions'>;
