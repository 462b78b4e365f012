import { applyDecorators, UseGuards } from '@nestjs/common';
import { RateLimit, SkipRateLimit } from 'nestjs-redis-rate-limit';
import { AdminTokenGuard } from './admin-token.guard.js';

/**
 * What every admin controller carries. Not under the default rule: the operator who sets `default` to 3/min must not
 * lock themselves out of the API that would undo it. Its own rule is defined here, not in configuration, so no PATCH
 * can change it; it runs before the token check (a global guard runs first), so it also bounds token guessing per IP.
 */
export const AdminRoutes = (): ClassDecorator => applyDecorators(SkipRateLimit('default'), RateLimit({ name: 'admin', limit: 30, window: '1m' }), UseGuards(AdminTokenGuard));
