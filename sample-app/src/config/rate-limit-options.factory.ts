import type { ConfigService } from '@nestjs/config';
import type { RateLimitModuleOptions } from 'nestjs-redis-rate-limit';
import { APP_CONFIG, type AppConfig } from './app.config.js';

/**
 * The module options: where the limits are kept, and the ConfigService the rules are read from (and re-read
 * whenever the admin API sets one). The rules themselves live in the `rateLimit` config namespace.
 */
export function rateLimitOptions(config: ConfigService): RateLimitModuleOptions {
  const app = config.getOrThrow<AppConfig>(APP_CONFIG);
  return {
    // A redis:// URL: the module creates the client and closes it on shutdown.
    store: app.redisUrl ?? 'memory',
    keyPrefix: app.keyPrefix,
    ...(app.timeoutMs !== undefined ? { timeoutMs: app.timeoutMs } : {}),
    config,
  };
}
