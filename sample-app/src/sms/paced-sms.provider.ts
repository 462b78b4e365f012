import { Injectable } from '@nestjs/common';
import { RateLimitService, RateLimitWaitTimeoutError } from 'nestjs-redis-rate-limit';
import { SMS_PROVIDER_RULE } from '../config/rule-names.js';
import { SmsDeliveryError, SmsProvider } from './sms-provider.js';
import { StubSmsProvider } from './stub-sms.provider.js';

/** The longest a send waits for the provider's limit, in ms: past it, the send fails (502, and the user's budget is refunded). */
export const SMS_PROVIDER_MAX_WAIT_MS = 5_000;

/**
 * Keeps to the provider's own limit (`sms-provider`, per second, across every instance of the app): a send over it
 * waits its turn instead of failing, then goes to the gateway (the stub here).
 */
@Injectable()
export class PacedSmsProvider extends SmsProvider {
  constructor(
    private readonly limits: RateLimitService,
    private readonly gateway: StubSmsProvider,
  ) {
    super();
  }

  async send(to: string, text: string, options?: { simulateFailure?: boolean }): Promise<void> {
    try {
      await this.limits.waitToConsume('provider', SMS_PROVIDER_RULE, { maxWaitMs: SMS_PROVIDER_MAX_WAIT_MS });
    } catch (error) {
      if (error instanceof RateLimitWaitTimeoutError) throw new SmsDeliveryError(`The SMS provider's limit would hold this message ${error.retryAfterMs} ms more`);
      throw error;
    }
    await this.gateway.send(to, text, options);
  }
}
