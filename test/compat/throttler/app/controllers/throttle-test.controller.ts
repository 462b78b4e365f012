import { Controller, Post } from '@nestjs/common';
import { RateLimit } from '../../../../../lib/index.js';

/** Declared inside throttler's controller.e2e-spec.ts; here beside the other controllers. */
@Controller('test/throttle')
export class ThrottleTestController {
  // throttler: @Throttle({ default: { limit: 1, ttl: 1000, blockDuration: 1000 } })
  @RateLimit({ limit: 1, window: 1000, blockMs: 1000 })
  @Post()
  async testThrottle() {
    return {
      code: 'THROTTLE_TEST',
    };
  }
}
