import { Module, type DynamicModule } from '@nestjs/common';
import { RateLimitModule } from '../../../../lib/index.js';
import type { CompatSetup } from '../utility/compat-setup.js';
import { CustomErrorMessageController } from './custom-error-message.controller.js';

/**
 * throttler:
 *   ThrottlerModule.forRoot({
 *     errorMessage: (context, detail) => `${context.getClass().name}-${context.getHandler().name} ${detail.tracker} ${detail.totalHits}`,
 *     throttlers: [{ name: 'default', ttl: seconds(3), limit: 2 }, { name: 'other', ttl: seconds(3), limit: 2 }],
 *   }) + { provide: APP_GUARD, useClass: ThrottlerGuard }
 * Throttler's `tracker` is its getTracker's answer, the client IP by default: `req.ip` here.
 */
@Module({
  controllers: [CustomErrorMessageController],
})
export class CustomErrorMessageThrottlerModule {
  static register(setup: CompatSetup): DynamicModule {
    return {
      module: CustomErrorMessageThrottlerModule,
      imports: [
        RateLimitModule.forRoot({
          ...setup,
          errorMessage: (context, detail) =>
            `${context.getClass().name}-${context.getHandler().name} ${context.switchToHttp().getRequest().ip} ${detail.totalHits}`,
          defaultRule: [
            { name: 'default', window: '3s', limit: 2 },
            { name: 'other', window: '3s', limit: 2 },
          ],
          globalGuard: true,
        }),
      ],
    };
  }
}
