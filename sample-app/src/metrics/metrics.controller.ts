import { Controller, Get, Res } from '@nestjs/common';
import { SkipRateLimit } from 'nestjs-redis-rate-limit';
import { MetricsRegistry } from './metrics.registry.js';

@Controller('metrics')
export class MetricsController {
  constructor(private readonly metrics: MetricsRegistry) {}

  /** Prometheus text format. Not limited: a scraper refused now and then would leave gaps in every graph. */
  @Get()
  @SkipRateLimit()
  async scrape(@Res({ passthrough: true }) response: { setHeader(name: string, value: string): void }): Promise<string> {
    response.setHeader('Content-Type', this.metrics.registry.contentType);
    return this.metrics.registry.metrics();
  }
}
