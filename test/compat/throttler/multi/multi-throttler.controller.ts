import { Controller, Get } from '@nestjs/common';
import { SkipRateLimit } from '../../../../lib/index.js';

@Controller()
export class MultiThrottlerController {
  @Get()
  simpleRoute() {
    return { success: true };
  }

  // throttler: @SkipThrottle({ short: true })
  @SkipRateLimit('short')
  @Get('skip-short')
  skipShort() {
    return { success: true };
  }

  // throttler: @SkipThrottle({ default: true, long: true })
  @SkipRateLimit('default', 'long')
  @Get('skip-default-and-long')
  skipDefAndLong() {
    return { success: true };
  }
}
