import { Controller, Get } from '@nestjs/common';
import { RateLimit } from '../../../../../lib/index.js';
import { AppService } from '../app.service.js';

// throttler: @Throttle({ default: { limit: 2, ttl: seconds(10), blockDuration: seconds(5) } }). Its block ends with a
// full budget: afterLockout 'restart' (ours resumes the window's count by default).
@RateLimit({ limit: 2, window: '10s', blockMs: '5s', afterLockout: 'restart' })
@Controller('limit')
export class LimitController {
  constructor(private readonly appService: AppService) {}
  @Get()
  getThrottled() {
    return this.appService.success();
  }

  @RateLimit({ limit: 5, window: '10s', blockMs: '15s', afterLockout: 'restart' })
  @Get('higher')
  getHigher() {
    return this.appService.success();
  }

  /** Not in throttler's suite: the same rule under our default (the window's count resumes after the block). */
  @RateLimit({ limit: 2, window: '10s', blockMs: '5s' })
  @Get('resume')
  getResume() {
    return this.appService.success();
  }
}
