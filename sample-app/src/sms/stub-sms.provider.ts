import { Injectable, Logger } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { APP_CONFIG, type AppConfig } from '../config/app.config.js';
import { SmsDeliveryError, SmsProvider } from './sms-provider.js';

export interface SentSms {
  to: string;
  text: string;
}

/**
 * Pretends to send: logs the message and keeps the last few. It fails when SMS_PROVIDER_FAIL=true or when the
 * request asks it to, which is how the sample shows that a failed send gives the budget back.
 */
@Injectable()
export class StubSmsProvider extends SmsProvider {
  private readonly logger = new Logger('SmsProvider');
  private readonly outbox: SentSms[] = [];

  constructor(private readonly config: ConfigService) {
    super();
  }

  /** The messages sent so far, newest last (at most 100). */
  get sent(): readonly SentSms[] {
    return this.outbox;
  }

  async send(to: string, text: string, options: { simulateFailure?: boolean } = {}): Promise<void> {
    if (options.simulateFailure || this.config.getOrThrow<AppConfig>(APP_CONFIG).smsProviderFail) {
      throw new SmsDeliveryError(`The provider refused the message to ${to}`);
    }
    this.outbox.push({ to, text });
    if (this.outbox.length > 100) this.outbox.shift();
    this.logger.log(`To ${to}: ${text}`);
  }
}
