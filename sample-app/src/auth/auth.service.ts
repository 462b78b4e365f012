import { Injectable, UnauthorizedException } from '@nestjs/common';
import { LoginAttemptsService } from './login-attempts.service.js';
import type { LoginRequest } from './login-request.pipe.js';
import { UsersRepository } from './users.repository.js';

@Injectable()
export class AuthService {
  constructor(
    private readonly users: UsersRepository,
    private readonly attempts: LoginAttemptsService,
  ) {}

  async login({ username, password }: LoginRequest, ip: string): Promise<{ username: string }> {
    await this.attempts.attempt(ip, username);
    if (!this.users.verify(username, password)) {
      // The same answer for an unknown user and a wrong password, so accounts cannot be discovered.
      throw new UnauthorizedException('Invalid username or password');
    }
    await this.attempts.recordSuccess(ip, username);
    return { username };
  }
}
