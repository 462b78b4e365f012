import { Controller, Get } from '@nestjs/common';
import { SkipRateLimit } from '../../../../lib/index.js';

@Controller()
export class CustomErrorMessageController {
  // throttler: @SkipThrottle({ other: true })
  @SkipRateLimit('other')
  @Get('default')
  defaultRoute() {
    return { success: true };
  }

  // throttler: @SkipThrottle({ default: true })
  @SkipRateLimit('default')
  @Get('other')
  otherRoute() {
    return { success: true };
  }
}
