import { Body, Controller, Param, Patch, UseGuards } from '@nestjs/common';
import { AdminTokenGuard } from './admin-token.guard.js';
import { RulePatchPipe, type RulePatch } from './rule-patch.pipe.js';
import { RuleUpdatesService, type RuleUpdate } from './rule-updates.service.js';

@Controller('admin/rate-limits')
@UseGuards(AdminTokenGuard)
export class AdminController {
  constructor(private readonly rules: RuleUpdatesService) {}

  /** `default` or a named rule; 400 naming the field when the change would make an invalid rule. */
  @Patch(':rule')
  update(@Param('rule') rule: string, @Body(RulePatchPipe) patch: RulePatch): RuleUpdate {
    return this.rules.update(rule, patch);
  }
}
