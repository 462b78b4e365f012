import { Body, Controller, HttpCode, Post, UseInterceptors } from '@nestjs/common';
import { RateLimitInterceptor } from 'nestjs-redis-rate-limit';
import { SmsRequestPipe, type SmsRequest } from './sms-request.pipe.js';
import { SmsService } from './sms.service.js';

@Controller('sms')
// The service's `enforce` throws the 429; the interceptor gives it Retry-After and the refusing rule's headers.
@UseInterceptors(RateLimitInterceptor)
export class SmsController {
  constructor(private readonly sms: SmsService) {}

  /** 200 when sent; 400 for a malformed number; 429 (with `retryAfter`) over the limits; 502 when the provider fails. */
  @Post('code')
  @HttpCode(200)
  sendCode(@Body(SmsRequestPipe) { phone, simulateFailure }: SmsRequest): Promise<{ sent: true }> {
    return this.sms.sendCode(phone, { simulateFailure });
  }
}
