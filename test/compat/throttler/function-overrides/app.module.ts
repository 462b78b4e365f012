import { Module, type DynamicModule } from '@nestjs/common';
import { RateLimitModule } from '../../../../lib/index.js';
import type { CompatSetup } from '../utility/compat-setup.js';
import { FunctionOverridesThrottlerController } from './function-overrides-throttler.controller.js';

/**
 * throttler:
 *   ThrottlerModule.forRoot([
 *     { name: 'default', ttl: seconds(3), limit: 2 },
 *     { name: 'custom', ttl: seconds(3), limit: 2, getTracker: () => 'customTrackerString',
 *       generateKey: (context, trackerString, throttlerName) => md5(`${throttlerName}-${trackerString}`) },  // one key for all endpoints
 *   ]) + { provide: APP_GUARD, useClass: ThrottlerGuard }
 * Throttler's per-throttler getTracker and generateKey are, per rule here, `key` (what it counts per) and
 * `shared: true` (one budget across routes); the module's `getTracker` / `generateKey` options apply to every rule.
 */
@Module({
  controllers: [FunctionOverridesThrottlerController],
})
export class FunctionOverridesThrottlerModule {
  static register(setup: CompatSetup): DynamicModule {
    return {
      module: FunctionOverridesThrottlerModule,
      imports: [
        RateLimitModule.forRoot({
          ...setup,
          headers: 'per-rule',
          defaultRule: [
            { name: 'default', window: '3s', limit: 2 },
            { name: 'custom', window: '3s', limit: 2, key: () => 'customTrackerString', shared: true },
          ],
          globalGuard: true,
        }),
      ],
    };
  }
}
