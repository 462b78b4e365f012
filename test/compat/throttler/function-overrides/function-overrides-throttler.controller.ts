import { Controller, Get } from '@nestjs/common';
import { SkipRateLimit } from '../../../../lib/index.js';

@Controller()
export class FunctionOverridesThrottlerController {
  // throttler: @SkipThrottle({ custom: true }), and so on below
  @SkipRateLimit('custom')
  @Get()
  simpleRoute() {
    return { success: true };
  }

  @SkipRateLimit('custom')
  @Get('1')
  simpleRouteOne() {
    return { success: true };
  }

  @SkipRateLimit('default')
  @Get('custom')
  simpleRouteTwo() {
    return { success: true };
  }

  @SkipRateLimit('default')
  @Get('custom/1')
  simpleRouteThrww() {
    return { success: true };
  }
}
