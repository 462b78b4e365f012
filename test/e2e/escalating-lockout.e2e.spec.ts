import { Body, Controller, HttpCode, Param, Post, UnauthorizedException, type INestApplication } from '@nestjs/common';
import { ConfigModule, ConfigService, registerAs } from '@nestjs/config';
import request from 'supertest';
import { RateLimit, RateLimitModule, RateLimitService, SkipRateLimit, type EscalatingLockoutOptions, type RateLimitModuleOptions } from '../../lib/index.js';
import { ManualClock } from '../support/manual.clock.js';
import { uniquePrefix } from '../support/redis-server.js';
import { STORE_KINDS, useStoreOptions } from './support/e2e-stores.js';
import { PLATFORMS, startApp } from './support/http-app.js';

/** One attempt a second, then a lockout of 1 minute that doubles, up to an hour. */
const LOCKOUT: EscalatingLockoutOptions = { base: '1m', factor: 2, max: '1h', forgetAfter: '1d' };
const LOGIN = { limit: 1, window: '1s', algorithm: 'sliding-log' as const, lockout: LOCKOUT };

@Controller('auth')
class LoginController {
  constructor(private readonly limits: RateLimitService) {}

  /** The module's (or config's) rule "login", through the guard. */
  @Post('login')
  @HttpCode(200)
  @RateLimit('login')
  login() {
    return { ok: true };
  }

  /** The rule written in the decorator. */
  @Post('inline')
  @HttpCode(200)
  @RateLimit(LOGIN)
  inline() {
    return { ok: true };
  }

  /** The service: every attempt counts, and a right password forgets the account's lockout level. */
  @Post('service/:user')
  @HttpCode(200)
  @SkipRateLimit()
  async service(@Param('user') user: string, @Body() body: { password?: string }) {
    await this.limits.enforce(`user:${user}`, 'login');
    if (body.password !== 'right') throw new UnauthorizedException();
    await this.limits.reset(`user:${user}`, 'login');
    return { ok: true };
  }
}

const storeOption = useStoreOptions();

describe.each(PLATFORMS)('escalating lockouts over HTTP on %s', (platform) => {
  describe.each(STORE_KINDS)('with the %s store', (kind) => {
    let app: INestApplication | undefined;
    let clock: ManualClock;

    /** The rule "login" from the module options, or (config: true) from ConfigService with string values. */
    async function start(options: { config?: boolean } = {}) {
      clock = new ManualClock();
      const base: RateLimitModuleOptions = { ...storeOption(kind), keyPrefix: uniquePrefix('esc'), clock: clock.now };
      const config = ConfigModule.forRoot({
        ignoreEnvFile: true,
        load: [registerAs('rateLimit', () => ({ rules: { login: { limit: '1', window: '1s', algorithm: 'sliding-log', lockout: { base: '1m', factor: '2', max: '1h', forgetAfter: '1d' } } } }))],
      });
      app = await startApp(platform, {
        imports: options.config
          ? [config, RateLimitModule.forRootAsync({ imports: [ConfigModule], inject: [ConfigService], useFactory: (c: ConfigService) => ({ ...base, config: c }), globalGuard: true, globalInterceptor: true })]
          : [RateLimitModule.forRoot({ ...base, rules: { login: LOGIN }, globalGuard: true, globalInterceptor: true })],
        controllers: [LoginController],
      });
      return app.getHttpServer();
    }

    afterEach(async () => {
      await app?.close();
      app = undefined;
    });

    /** Each round: the one attempt of the second, then one more; returns each refusal's Retry-After, waiting it out. */
    async function retryAfters(server: unknown, path: string, rounds: number, body: object = {}): Promise<string[]> {
      const seen: string[] = [];
      for (let i = 0; i < rounds; i++) {
        await request(server as never).post(path).send(body);
        const refused = await request(server as never).post(path).send(body).expect(429);
        seen.push(refused.headers['retry-after']);
        clock.advance(Number(refused.headers['retry-after']) * 1000);
      }
      return seen;
    }

    it('sends Retry-After 60, 120, then 240 s for a rule in the module options', async () => {
      expect(await retryAfters(await start(), '/auth/login', 3)).toEqual(['60', '120', '240']);
    });

    it('sends Retry-After 60, 120, then 240 s for a rule written in the decorator', async () => {
      expect(await retryAfters(await start(), '/auth/inline', 3)).toEqual(['60', '120', '240']);
    });

    it('sends Retry-After 60, 120, then 240 s for a rule from ConfigService, its numbers given as strings', async () => {
      expect(await retryAfters(await start({ config: true }), '/auth/login', 3)).toEqual(['60', '120', '240']);
    });

    it('applies a factor changed in ConfigService to the next lockout, without a restart', async () => {
      const server = await start({ config: true });
      expect(await retryAfters(server, '/auth/login', 1)).toEqual(['60']);
      app!.get(ConfigService).set('rateLimit.rules.login.lockout.factor', '3');
      expect(await retryAfters(server, '/auth/login', 2)).toEqual(['180', '540']);
    });

    it('refuses a right password during the lockout, with the escalated wait in the body', async () => {
      const server = await start();
      await retryAfters(server, '/auth/service/alice', 1, { password: 'wrong' });
      await request(server).post('/auth/service/alice').send({ password: 'wrong' }).expect(401);
      const locked = await request(server).post('/auth/service/alice').send({ password: 'right' }).expect(429);
      expect([locked.headers['retry-after'], locked.body.retryAfter]).toEqual(['120', 120]);
    });

    it('starts from base again after a successful login resets the account through the service', async () => {
      const server = await start();
      await retryAfters(server, '/auth/service/alice', 2, { password: 'wrong' });
      clock.advance(1000);
      await request(server).post('/auth/service/alice').send({ password: 'right' }).expect(200);
      expect(await retryAfters(server, '/auth/service/alice', 1, { password: 'wrong' })).toEqual(['60']);
    });
  });
});
