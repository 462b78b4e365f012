import { Module } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { MetricsController } from './metrics.controller.js';
import { MetricsRegistry } from './metrics.registry.js';
import { RateLimitRejectionsFilter } from './rate-limit-rejections.filter.js';

@Module({
  controllers: [MetricsController],
  providers: [MetricsRegistry, { provide: APP_FILTER, useClass: RateLimitRejectionsFilter }],
  exports: [MetricsRegistry],
})
export class MetricsModule {}
