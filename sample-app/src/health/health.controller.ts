import { Controller, Get } from '@nestjs/common';
import { SkipRateLimit } from 'nestjs-redis-rate-limit';

@Controller('health')
export class HealthController {
  /** Load balancers poll this; limiting it would take a healthy instance out of rotation. */
  @Get()
  @SkipRateLimit()
  check(): { status: 'ok' } {
    return { status: 'ok' };
  }
}
