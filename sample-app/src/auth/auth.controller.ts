import { Body, Controller, HttpCode, Post, Req } from '@nestjs/common';
import { clientIp, type ClientRequest } from '../http/client-ip.js';
import { AuthService } from './auth.service.js';
import { LoginRequestPipe, type LoginRequest } from './login-request.pipe.js';

@Controller('auth')
export class AuthController {
  constructor(private readonly auth: AuthService) {}

  /** 200 on success, 401 on a wrong password, 429 (with `retryAfter`) once the IP or the account is locked: 1 minute, then 2, 4, ... up to a day. */
  @Post('login')
  @HttpCode(200)
  login(@Body(LoginRequestPipe) body: LoginRequest, @Req() request: ClientRequest): Promise<{ username: string }> {
    return this.auth.login(body, clientIp(request));
  }
}
