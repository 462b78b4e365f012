import { Module, type DynamicModule } from '@nestjs/common';
import { RateLimitModule } from '../../../../lib/index.js';
import type { CompatSetup } from '../utility/compat-setup.js';
import { MultiThrottlerController } from './multi-throttler.controller.js';

/**
 * throttler:
 *   ThrottlerModule.forRoot([{ ttl: seconds(5), limit: 2 }, { name: 'long', ttl: minutes(1), limit: 5 }, { name: 'short', limit: 1, ttl: seconds(1) }])
 *   + { provide: APP_GUARD, useClass: ThrottlerGuard }
 */
@Module({
  controllers: [MultiThrottlerController],
})
export class MultiThrottlerAppModule {
  static register(setup: CompatSetup): DynamicModule {
    return {
      module: MultiThrottlerAppModule,
      imports: [
        RateLimitModule.forRoot({
          ...setup,
          headers: 'per-rule',
          defaultRule: [
            { name: 'default', window: '5s', limit: 2 },   // throttler's unnamed throttler is 'default'; a list names each rule
            { name: 'long', window: '1m', limit: 5 },
            { name: 'short', limit: 1, window: '1s' },
          ],
          globalGuard: true,
        }),
      ],
    };
  }
}
