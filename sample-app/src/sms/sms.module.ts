import { Module } from '@nestjs/common';
import { SmsProvider } from './sms-provider.js';
import { SmsController } from './sms.controller.js';
import { SmsService } from './sms.service.js';
import { StubSmsProvider } from './stub-sms.provider.js';

@Module({
  controllers: [SmsController],
  providers: [SmsService, StubSmsProvider, { provide: SmsProvider, useExisting: StubSmsProvider }],
})
export class SmsModule {}
