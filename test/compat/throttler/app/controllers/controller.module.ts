import { Module, type DynamicModule } from '@nestjs/common';
import { RateLimitModule } from '../../../../../lib/index.js';
import type { CompatSetup } from '../../utility/compat-setup.js';
import { AppService } from '../app.service.js';
import { AppController } from './app.controller.js';
import { DefaultController } from './default.controller.js';
import { LimitController } from './limit.controller.js';

/**
 * throttler:
 *   ThrottlerModule.forRoot([{ limit: 5, ttl: seconds(60), blockDuration: seconds(20), ignoreUserAgents: [/throttler-test/g] }])
 * Its headers are X-RateLimit-* per throttler (`headers: 'per-rule'`), and its block ends with a full budget
 * (`afterLockout: 'restart'`). The guard is registered by the spec, as throttler's spec does.
 */
@Module({
  controllers: [AppController, DefaultController, LimitController],
  providers: [AppService],
})
export class ControllerModule {
  static register(setup: CompatSetup): DynamicModule {
    return {
      module: ControllerModule,
      imports: [
        RateLimitModule.forRoot({
          ...setup,
          headers: 'per-rule',
          defaultRule: { limit: 5, window: '60s', blockMs: '20s', afterLockout: 'restart', ignoreUserAgents: [/throttler-test/g] },
        }),
      ],
    };
  }
}
