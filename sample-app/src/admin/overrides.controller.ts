import { Body, Controller, Delete, Get, HttpCode, NotFoundException, Param, Put, Query } from '@nestjs/common';
import { RateLimitConfigError, RateLimitService, type RateLimitOverride, type RateLimitOverrideOptions } from 'nestjs-redis-rate-limit';
import { AdminRoutes } from './admin-routes.decorator.js';
import { fieldError } from './field-error.js';

/**
 * Per-key overrides of the rules with `overrides: true` (here `api-key`): raise one customer's limit or block one
 * abusive key until an expiry, without a deploy. Kept in Redis, so every instance applies them on its next decision.
 * Guarded and rate-limited as every admin route (see AdminRoutes).
 */
@Controller('admin/rate-limits/:rule/overrides')
@AdminRoutes()
export class OverridesController {
  constructor(private readonly rateLimit: RateLimitService) {}

  /** Body `{ limit, ttlMs, reason? }` or `{ block: true, ttlMs, reason? }`; 400 naming the field when invalid. */
  @Put(':key')
  async set(@Param('rule') rule: string, @Param('key') key: string, @Body() body: RateLimitOverrideOptions): Promise<RateLimitOverride> {
    try {
      return await this.rateLimit.overrides.set(rule, key, body);
    } catch (error) {
      if (error instanceof RateLimitConfigError && error.field === 'rule') throw new NotFoundException(error.message);
      if (error instanceof RateLimitConfigError) throw fieldError(error.field, error.message);
      throw error;
    }
  }

  /** The rule's overrides in force, soonest to end first; `?all=true` lists every rule's. */
  @Get()
  list(@Param('rule') rule: string, @Query('all') all?: string): Promise<RateLimitOverride[]> {
    return this.rateLimit.overrides.list(all === 'true' ? undefined : rule);
  }

  /** Ends the override at once: the rule's own limit applies to the next request. 404 when there was none. */
  @Delete(':key')
  @HttpCode(204)
  async remove(@Param('rule') rule: string, @Param('key') key: string): Promise<void> {
    if (!(await this.rateLimit.overrides.remove(rule, key))) throw new NotFoundException(`No override of rule "${rule}" for this key`);
  }
}
