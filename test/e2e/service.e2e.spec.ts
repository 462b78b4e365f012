import { BadGatewayException, Body, Controller, Get, HttpCode, Injectable, Ip, Param, Post, UnauthorizedException, type INestApplication } from '@nestjs/common';
import request from 'supertest';
import { RateLimitExceededException, RateLimitModule, RateLimitService, type Decision } from '../../lib/index.js';
import { ManualClock } from '../support/manual.clock.js';
import { uniquePrefix } from '../support/redis-server.js';
import { STORE_KINDS, useStoreOptions } from './support/e2e-stores.js';
import { PLATFORMS, startApp } from './support/http-app.js';

const SECOND = 1_000;
const MINUTE = 60 * SECOND;

/** A refusal built from peeked or consumed decisions: the longest wait among the rules that refused. */
function refusal(message: string, decisions: Decision[]): RateLimitExceededException {
  const wait = Math.max(...decisions.filter((d) => !d.allowed).map((d) => d.retryAfterMs));
  return new RateLimitExceededException(message, wait, decisions);
}

/** Failed logins are counted per username and per IP; successful ones are not, and clear the username's count. */
@Controller('auth')
class LoginController {
  constructor(private readonly rateLimit: RateLimitService) {}

  @Post('login')
  @HttpCode(200)
  async login(@Body() body: { username: string; password: string }, @Ip() ip: string) {
    const checks = [
      { key: `user:${body.username}`, rule: 'login-user' },
      { key: `ip:${ip}`, rule: 'login-ip' },
    ];
    const peeked = await Promise.all(checks.map(({ key, rule }) => this.rateLimit.peek(key, rule)));
    if (peeked.some((d) => !d.allowed)) throw refusal('Too many failed logins', peeked);
    if (body.password !== 'right') {
      await this.rateLimit.consumeAll(checks);
      throw new UnauthorizedException();
    }
    await this.rateLimit.reset(`user:${body.username}`, 'login-user');
    return { ok: true };
  }
}

@Injectable()
class SmsProvider {
  failNext = false;
  readonly sent: string[] = [];
  async send(phone: string): Promise<void> {
    if (this.failNext) {
      this.failNext = false;
      throw new Error('provider down');
    }
    this.sent.push(phone);
  }
}

const SMS_RULES = ['sms-minute', 'sms-hour', 'sms-day'];

/** One SMS per phone per minute, five per hour, ten per day; a send the provider fails is given back. */
@Controller('sms')
class SmsController {
  constructor(
    private readonly rateLimit: RateLimitService,
    private readonly provider: SmsProvider,
  ) {}

  @Post(':phone')
  @HttpCode(202)
  async send(@Param('phone') phone: string) {
    const key = `phone:${phone}`;
    const result = await this.rateLimit.consumeAll(key, SMS_RULES);
    if (!result.allowed) throw refusal('Too many SMS', result.decisions);
    try {
      await this.provider.send(phone);
    } catch {
      await Promise.all(SMS_RULES.map((rule) => this.rateLimit.refund(key, rule)));
      throw new BadGatewayException('SMS provider failed');
    }
    return { sent: true };
  }
}

@Controller('reports')
class ReportsController {
  constructor(private readonly rateLimit: RateLimitService) {}

  @Get(':user')
  async report(@Param('user') user: string) {
    await this.rateLimit.enforce(`user:${user}`, 'reports');
    return { ok: true };
  }

  @Get(':user/export')
  async export(@Param('user') user: string) {
    await this.rateLimit.enforce(`user:${user}`, ['reports', { name: 'exports', limit: 1, window: '10m', algorithm: 'sliding-log' }]);
    return { ok: true };
  }
}

const rule = (limit: number, window: string) => ({ limit, window, algorithm: 'sliding-log' as const });
const storeOption = useStoreOptions();

describe.each(PLATFORMS)('RateLimitService in controllers on %s', (platform) => {
  describe.each(STORE_KINDS)('with the %s store', (kind) => {
    let app: INestApplication;
    let clock: ManualClock;
    let server: ReturnType<INestApplication['getHttpServer']>;

    beforeEach(async () => {
      clock = new ManualClock();
      app = await startApp(platform, {
        imports: [
          RateLimitModule.forRoot({
            ...storeOption(kind),
            keyPrefix: uniquePrefix('svc'),
            clock: clock.now,
            errorMessage: 'Slow down',
            rules: {
              'login-user': rule(3, '15m'),
              'login-ip': rule(5, '1h'),
              'sms-minute': rule(1, '1m'),
              'sms-hour': rule(5, '1h'),
              'sms-day': rule(10, '1d'),
              reports: rule(2, '1m'),
            },
          }),
        ],
        controllers: [LoginController, SmsController, ReportsController],
        providers: [SmsProvider],
      });
      server = app.getHttpServer();
    });
    afterEach(() => app.close());

    const login = (username: string, password: string) => request(server).post('/auth/login').send({ username, password });
    const sms = (phone: string) => request(server).post(`/sms/${phone}`);

    describe('login', () => {
      it('does not count successful logins', async () => {
        for (let i = 0; i < 8; i++) await login('alice', 'right').expect(200);
      });

      it('refuses even the right password once a username has three failures', async () => {
        for (let i = 0; i < 3; i++) {
          await login('alice', 'wrong').expect(401);
          clock.advance(MINUTE);
        }
        const refused = await login('alice', 'right').expect(429);
        // The first failure, three minutes ago, leaves the 15-minute window in 12 minutes.
        expect(refused.body).toEqual({ statusCode: 429, message: 'Too many failed logins', retryAfter: 12 * 60 });
      });

      it('clears the count of a username after a successful login', async () => {
        await login('alice', 'wrong').expect(401);
        await login('alice', 'wrong').expect(401);
        await login('alice', 'right').expect(200);
        await login('alice', 'wrong').expect(401);
        await login('alice', 'wrong').expect(401);
        await login('alice', 'right').expect(200);
      });

      it('counts usernames apart', async () => {
        for (let i = 0; i < 3; i++) await login('alice', 'wrong').expect(401);
        await login('alice', 'right').expect(429);
        await login('bob', 'right').expect(200);
      });

      it('refuses every username from an IP with five failures in the hour', async () => {
        for (const name of ['a', 'b', 'c', 'd', 'e']) await login(name, 'wrong').expect(401);
        clock.advance(10 * MINUTE);
        const refused = await login('zoe', 'right').expect(429);
        expect(refused.body).toEqual({ statusCode: 429, message: 'Too many failed logins', retryAfter: 50 * 60 });
      });
    });

    describe('sms', () => {
      it('sends one SMS per phone per minute', async () => {
        await sms('100').expect(202);
        const refused = await sms('100').expect(429);
        expect(refused.body).toEqual({ statusCode: 429, message: 'Too many SMS', retryAfter: 60 });
        await sms('200').expect(202);
        clock.advance(MINUTE);
        await sms('100').expect(202);
      });

      it('sends five SMS per phone per hour', async () => {
        for (let i = 0; i < 5; i++) {
          await sms('100').expect(202);
          clock.advance(61 * SECOND);
        }
        const refused = await sms('100').expect(429);
        expect(refused.body.retryAfter).toBe(3600 - 5 * 61);
      });

      it('sends ten SMS per phone per day', async () => {
        for (let i = 0; i < 10; i++) {
          await sms('100').expect(202);
          clock.advance(13 * MINUTE);
        }
        const refused = await sms('100').expect(429);
        expect(refused.body.retryAfter).toBe(24 * 3600 - 10 * 13 * 60);
      });

      it('charges a refused request to none of the rules', async () => {
        await sms('100').expect(202);
        for (let i = 0; i < 5; i++) await sms('100').expect(429);
        for (let i = 0; i < 4; i++) {
          clock.advance(MINUTE);
          await sms('100').expect(202);
        }
      });

      it('gives back what a send took when the provider fails', async () => {
        const provider = app.get(SmsProvider);
        provider.failNext = true;
        await sms('100').expect(502);
        await sms('100').expect(202);
        expect(provider.sent).toEqual(['100']);
      });
    });

    describe('enforce', () => {
      it('throws a 429 with the module error message and the wait in seconds', async () => {
        await request(server).get('/reports/alice').expect(200);
        clock.advance(20 * SECOND);
        await request(server).get('/reports/alice').expect(200);
        const refused = await request(server).get('/reports/alice').expect(429);
        expect(refused.body).toEqual({ statusCode: 429, message: 'Slow down', retryAfter: 40 });
        await request(server).get('/reports/bob').expect(200);
      });

      it('enforces several rules at once, all or nothing', async () => {
        await request(server).get('/reports/alice/export').expect(200);
        const refused = await request(server).get('/reports/alice/export').expect(429);
        expect(refused.body).toEqual({ statusCode: 429, message: 'Slow down', retryAfter: 600 });
        // The refused export took nothing from "reports".
        await request(server).get('/reports/alice').expect(200);
        await request(server).get('/reports/alice').expect(429);
      });
    });
  });
});
