import { ForbiddenException, Injectable, UnauthorizedException, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { createHash, timingSafeEqual } from 'node:crypto';
import { APP_CONFIG, type AppConfig } from '../config/app.config.js';

/** `Authorization: Bearer <ADMIN_TOKEN>`: 401 without a bearer token, 403 with a wrong one. */
@Injectable()
export class AdminTokenGuard implements CanActivate {
  constructor(private readonly config: ConfigService) {}

  canActivate(context: ExecutionContext): boolean {
    const { headers } = context.switchToHttp().getRequest<{ headers: Record<string, string | string[] | undefined> }>();
    const header = headers.authorization;
    const token = typeof header === 'string' ? /^Bearer\s+(\S+)\s*$/i.exec(header)?.[1] : undefined;
    if (!token) throw new UnauthorizedException('Authorization: Bearer <ADMIN_TOKEN> is required');
    if (!sameSecret(token, this.config.getOrThrow<AppConfig>(APP_CONFIG).adminToken)) throw new ForbiddenException('Wrong admin token');
    return true;
  }
}

/** Compares digests in constant time, so neither the token nor its length leaks through response times. */
function sameSecret(a: string, b: string): boolean {
  const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest();
  return timingSafeEqual(digest(a), digest(b));
}
