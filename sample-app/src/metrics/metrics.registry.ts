import { Injectable, type OnModuleDestroy } from '@nestjs/common';
import { collectDefaultMetrics, Counter, Registry } from 'prom-client';

/**
 * The app's Prometheus registry: Node's process metrics and the sample's own counter of rate-limit rejections.
 * A registry per app instance (not prom-client's global one), so several apps in one process do not collide.
 */
@Injectable()
export class MetricsRegistry implements OnModuleDestroy {
  readonly registry = new Registry();

  /** 429s, by route pattern (`/api/items/:id`, never the raw URL, which would make a series per id). */
  readonly rateLimitRejections = new Counter({
    name: 'sample_rate_limit_rejections_total',
    help: 'Requests refused with 429 by a rate limit, by route',
    labelNames: ['route'] as const,
    registers: [this.registry],
  });

  constructor() {
    collectDefaultMetrics({ register: this.registry });
  }

  onModuleDestroy(): void {
    this.registry.clear();
  }
}
