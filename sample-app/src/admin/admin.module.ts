import { Module } from '@nestjs/common';
import { AdminController } from './admin.controller.js';
import { AdminTokenGuard } from './admin-token.guard.js';
import { OverridesController } from './overrides.controller.js';
import { RuleUpdatesService } from './rule-updates.service.js';

@Module({
  controllers: [AdminController, OverridesController],
  providers: [AdminTokenGuard, RuleUpdatesService],
})
export class AdminModule {}
