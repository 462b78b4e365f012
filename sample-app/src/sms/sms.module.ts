import { Module } from '@nestjs/common';
import { PacedSmsProvider } from './paced-sms.provider.js';
import { SmsProvider } from './sms-provider.js';
import { SmsController } from './sms.controller.js';
import { SmsService } from './sms.service.js';
import { StubSmsProvider } from './stub-sms.provider.js';

@Module({
  controllers: [SmsController],
  // Sends go through PacedSmsProvider, which waits for the provider's own limit before handing them to the stub.
  providers: [SmsService, StubSmsProvider, PacedSmsProvider, { provide: SmsProvider, useExisting: PacedSmsProvider }],
})
export class SmsModule {}
