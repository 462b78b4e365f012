import { Controller, Get } from '@nestjs/common';
import { RateLimit, SkipRateLimit } from '../../../../../lib/index.js';
import { AppService } from '../app.service.js';

// throttler: @Throttle({ default: { limit: 2, ttl: seconds(10) } })
@Controller()
@RateLimit({ limit: 2, window: '10s' })
export class AppController {
  constructor(private readonly appService: AppService) {}

  @Get()
  async test() {
    return this.appService.success();
  }

  @Get('ignored')
  @SkipRateLimit()
  async ignored() {
    return this.appService.ignored();
  }

  @Get('ignore-user-agents')
  async ignoreUserAgents() {
    return this.appService.ignored();
  }
}
