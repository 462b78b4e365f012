import { Body, Controller, Param, Patch } from '@nestjs/common';
import { AdminRoutes } from './admin-routes.decorator.js';
import { RulePatchPipe, type RulePatch } from './rule-patch.pipe.js';
import { RuleUpdatesService, type RuleUpdate } from './rule-updates.service.js';

/** Rule updates at run time; guarded and rate-limited as every admin route (see AdminRoutes). */
@Controller('admin/rate-limits')
@AdminRoutes()
export class AdminController {
  constructor(private readonly rules: RuleUpdatesService) {}

  /** `default` or a named rule; 400 naming the field when the change would make an invalid rule. */
  @Patch(':rule')
  update(@Param('rule') rule: string, @Body(RulePatchPipe) patch: RulePatch): RuleUpdate {
    return this.rules.update(rule, patch);
  }
}
