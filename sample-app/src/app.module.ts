import { Module, type DynamicModule } from '@nestjs/common';
import { ConfigModule, ConfigService } from '@nestjs/config';
import { AdminModule } from './admin/admin.module.js';
import { ApiModule } from './api/api.module.js';
import type { SampleAppOptions } from './app-options.js';
import { AuthModule } from './auth/auth.module.js';
import { appConfig } from './config/app.config.js';
import { rateLimitOptions } from './config/rate-limit-options.factory.js';
import { rateLimitConfig } from './config/rate-limit.config.js';
import { HealthModule } from './health/health.module.js';
import { MetricsModule } from './metrics/metrics.module.js';
import { MetricsRegistry } from './metrics/metrics.registry.js';
import { RateLimitModule } from 'nestjs-redis-rate-limit';
import { ReportsModule } from './reports/reports.module.js';
import { SmsModule } from './sms/sms.module.js';

/** Relative to the working directory: `npm start` runs from the repository root. A missing file is fine. */
const ENV_FILE = 'sample-app/.env';

@Module({})
export class AppModule {
  static register(options: SampleAppOptions = {}): DynamicModule {
    // Read when the config namespaces are built, i.e. after ConfigModule has loaded `.env` into process.env.
    const source = () => options.env ?? process.env;
    return {
      module: AppModule,
      imports: [
        ConfigModule.forRoot({
          isGlobal: true,
          envFilePath: ENV_FILE,
          ignoreEnvFile: options.env !== undefined,
          load: [appConfig(source), rateLimitConfig(source)],
        }),
        RateLimitModule.forRootAsync({
          isGlobal: true,
          // Every route gets the default rule (per client IP) unless it says @SkipRateLimit().
          globalGuard: true,
          // The library's own metrics (decisions, store errors, circuit state) go to the app's registry, served at /metrics.
          imports: [MetricsModule],
          inject: [ConfigService, MetricsRegistry],
          useFactory: (config: ConfigService, metrics: MetricsRegistry) => ({ ...rateLimitOptions(config), metrics: { registry: metrics.registry } }),
        }),
        MetricsModule,
        HealthModule,
        AuthModule,
        SmsModule,
        ApiModule,
        ReportsModule,
        AdminModule,
      ],
    };
  }
}
