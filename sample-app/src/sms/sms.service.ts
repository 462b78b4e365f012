import { BadGatewayException, Injectable } from '@nestjs/common';
import { randomInt } from 'node:crypto';
import { SMS_RULES } from '../config/rule-names.js';
import { RateLimitService } from 'nestjs-redis-rate-limit';
import { SmsDeliveryError, SmsProvider } from './sms-provider.js';

@Injectable()
export class SmsService {
  constructor(
    private readonly limits: RateLimitService,
    private readonly provider: SmsProvider,
  ) {}

  /**
   * Sends a login code if the phone is within 1 per minute, 5 per hour and 10 per day. The three are decided
   * together (all-or-nothing, one round trip): checked one after another, a request the day limit refuses would
   * still use up the minute's budget. A send the provider fails is refunded, so it does not count.
   */
  async sendCode(phone: string, options: { simulateFailure?: boolean } = {}): Promise<{ sent: true }> {
    const key = `phone:${phone}`;
    await this.limits.enforce(key, SMS_RULES);
    const code = String(randomInt(0, 1_000_000)).padStart(6, '0');
    try {
      await this.provider.send(phone, `Your login code is ${code}`, options);
    } catch (error) {
      await Promise.all(SMS_RULES.map((rule) => this.limits.refund(key, rule)));
      if (error instanceof SmsDeliveryError) throw new BadGatewayException('The SMS provider failed; no code was sent and the attempt was not counted');
      throw error;
    }
    return { sent: true };
  }
}
