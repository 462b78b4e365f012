import { BadRequestException, Injectable, type PipeTransform } from '@nestjs/common';

export interface LoginRequest {
  username: string;
  password: string;
}

/**
 * Validates the body before anything is counted. Usernames are compared without case and surrounding spaces,
 * so `Alice` and ` alice` share alice's budget of failed attempts instead of each getting a fresh one.
 */
@Injectable()
export class LoginRequestPipe implements PipeTransform<unknown, LoginRequest> {
  transform(body: unknown): LoginRequest {
    const { username, password } = (body ?? {}) as Record<string, unknown>;
    if (typeof username !== 'string' || username.trim() === '' || username.length > 64) {
      throw new BadRequestException('username must be a non-empty string of at most 64 characters');
    }
    if (typeof password !== 'string' || password === '' || password.length > 256) {
      throw new BadRequestException('password must be a non-empty string of at most 256 characters');
    }
    return { username: username.trim().toLowerCase(), password };
  }
}
