import { Body, Controller, Param, Patch, UseGuards } from '@nestjs/common';
import { RateLimit, SkipRateLimit } from 'nestjs-redis-rate-limit';
import { AdminTokenGuard } from './admin-token.guard.js';
import { RulePatchPipe, type RulePatch } from './rule-patch.pipe.js';
import { RuleUpdatesService, type RuleUpdate } from './rule-updates.service.js';

/**
 * Not under the default rule: the operator who sets `default` to 3/min must not lock themselves out of the API
 * that would undo it. Its own rule is defined here, not in configuration, so no PATCH can change it; it runs
 * before the token check (a global guard runs first), so it also bounds token guessing per IP.
 */
@Controller('admin/rate-limits')
@SkipRateLimit('default')
@RateLimit({ name: 'admin', limit: 30, window: '1m' })
@UseGuards(AdminTokenGuard)
export class AdminController {
  constructor(private readonly rules: RuleUpdatesService) {}

  /** `default` or a named rule; 400 naming the field when the change would make an invalid rule. */
  @Patch(':rule')
  update(@Param('rule') rule: string, @Body(RulePatchPipe) patch: RulePatch): RuleUpdate {
    return this.rules.update(rule, patch);
  }
}
