import { Body, Catch, Controller, Get, HttpCode, HttpException, Param, Post, UseInterceptors, type ArgumentsHost, type ExceptionFilter, type INestApplication, type Provider } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { Registry } from 'prom-client';
import request from 'supertest';
import { RateLimitExceededException, RateLimitInterceptor, RateLimitModule, RateLimitService, type RateLimitHeadersMode } from '../../lib/index.js';
import { ManualClock } from '../support/manual.clock.js';
import { uniquePrefix } from '../support/redis-server.js';
import { STORE_KINDS, useStoreOptions } from './support/e2e-stores.js';
import { PLATFORMS, startApp } from './support/http-app.js';

const SECOND = 1_000;

/** Business code refusing with a 429 under the global guard, the two ways the README shows. */
@Controller()
class AccountController {
  constructor(private readonly rateLimit: RateLimitService) {}

  /** `enforce`: 2 reports a minute per user. */
  @Get('reports/:user')
  async report(@Param('user') user: string) {
    await this.rateLimit.enforce(`user:${user}`, 'reports');
    return { ok: true };
  }

  /** A 429 of the app's own making: only a wait. */
  @Get('maintenance')
  maintenance() {
    throw new RateLimitExceededException('Back in a moment', 5 * SECOND);
  }

  /** The login recipe: peek both rules, throw the exception built from the peeked decisions, count failures. */
  @Post('login')
  @HttpCode(200)
  async login(@Body() body: { username: string; password: string }) {
    const checks = [
      { key: 'ip:client', rule: 'login-ip' },
      { key: `user:${body.username}`, rule: 'login-user' },
    ];
    const peeked = await Promise.all(checks.map(({ key, rule }) => this.rateLimit.peek(key, rule)));
    const refused = peeked.filter((d) => !d.allowed);
    if (refused.length > 0) throw new RateLimitExceededException('Too many failed logins', Math.max(...refused.map((d) => d.retryAfterMs)), peeked);
    if (body.password !== 'right') {
      await this.rateLimit.consumeAll(checks);
      return { ok: false };
    }
    return { ok: true };
  }
}

/** The same routes, with RateLimitInterceptor on this controller alone (no `globalInterceptor`). */
@Controller()
@UseInterceptors(RateLimitInterceptor)
class InterceptedAccountController extends AccountController {}

const rule = (limit: number, window: string) => ({ limit, window, algorithm: 'sliding-log' as const });

/** An app's own catch-all filter with a uniform error body, as many apps have. */
@Catch()
class AppErrorsFilter implements ExceptionFilter {
  static seen: unknown[] = [];
  catch(exception: unknown, host: ArgumentsHost): void {
    AppErrorsFilter.seen.push(exception);
    const status = exception instanceof HttpException ? exception.getStatus() : 500;
    const response = host.switchToHttp().getResponse<{ status?: (code: number) => { json(body: unknown): void }; code?: (code: number) => { send(body: unknown): void } }>();
    const body = { error: status };
    // Express's response, or Fastify's reply.
    if (typeof response.code === 'function') response.code(status).send(body);
    else response.status!(status).json(body);
  }
}
const storeOption = useStoreOptions();

describe.each(PLATFORMS)('a 429 thrown by business code on %s', (platform) => {
  describe.each(STORE_KINDS)('with the %s store', (kind) => {
    let app: INestApplication | undefined;
    let clock: ManualClock;
    let registry: Registry;

    /** `interceptor`: RateLimitInterceptor for every handler (`globalInterceptor`), on the controller alone, or none (the default). */
    async function start(headers: RateLimitHeadersMode = 'draft', providers: Provider[] = [], interceptor: 'global' | 'controller' | 'none' = 'global') {
      clock = new ManualClock();
      registry = new Registry();
      app = await startApp(platform, {
        imports: [
          RateLimitModule.forRoot({
            ...storeOption(kind),
            keyPrefix: uniquePrefix('svc429'),
            clock: clock.now,
            headers,
            metrics: { registry },
            defaultRule: rule(100, '1m'),
            rules: { reports: rule(2, '1m'), 'login-ip': rule(10, '1h'), 'login-user': rule(2, '15m') },
            globalGuard: true,
            globalInterceptor: interceptor === 'global',
          }),
        ],
        controllers: [interceptor === 'controller' ? InterceptedAccountController : AccountController],
        providers,
      });
      return app.getHttpServer();
    }

    afterEach(async () => {
      await app?.close();
      app = undefined;
    });

    const rejected = async (rule: string) => {
      const sample = (await registry.getSingleMetricAsString('rate_limit_decisions_total')).split('\n').find((line) => line.startsWith(`rate_limit_decisions_total{rule="${rule}",result="rejected"}`));
      return sample === undefined ? 0 : Number(sample.split(' ').pop());
    };

    async function exhaustReports(server: ReturnType<INestApplication['getHttpServer']>) {
      await request(server).get('/reports/alice').expect(200);
      clock.advance(20 * SECOND);
      await request(server).get('/reports/alice').expect(200);
      return request(server).get('/reports/alice').expect(429);
    }

    async function lockAlice(server: ReturnType<INestApplication['getHttpServer']>) {
      await request(server).post('/login').send({ username: 'alice', password: 'wrong' }).expect(200);
      clock.advance(60 * SECOND);
      await request(server).post('/login').send({ username: 'alice', password: 'wrong' }).expect(200);
      clock.advance(60 * SECOND);
      return request(server).post('/login').send({ username: 'alice', password: 'right' }).expect(429);
    }

    it('answers an enforce refusal with Retry-After and the draft fields of the refusing rule, not the guard\'s', async () => {
      const refused = await exhaustReports(await start());
      // The first report, 20 s ago, leaves the minute in 40 s.
      expect(refused.body).toEqual({ statusCode: 429, message: 'Too Many Requests', retryAfter: 40 });
      expect(refused.headers['retry-after']).toBe('40');
      expect(refused.headers['ratelimit-policy']).toBe('"reports";q=2;w=60');
      expect(refused.headers['ratelimit']).toBe('"reports";r=0;t=60');
    });

    it('answers an enforce refusal with Retry-After and the refusing rule\'s fields when only its controller uses RateLimitInterceptor', async () => {
      const refused = await exhaustReports(await start('draft', [], 'controller'));
      expect(refused.headers['retry-after']).toBe('40');
      expect(refused.headers['ratelimit-policy']).toBe('"reports";q=2;w=60');
      expect(refused.headers['ratelimit']).toBe('"reports";r=0;t=60');
    });

    it('leaves an enforce refusal as Nest renders it without RateLimitInterceptor (the default): its body, no Retry-After', async () => {
      const refused = await exhaustReports(await start('draft', [], 'none'));
      expect(refused.body).toEqual({ statusCode: 429, message: 'Too Many Requests', retryAfter: 40 });
      expect(refused.headers['retry-after']).toBeUndefined();
      // What the guard set for the route's own rule, which admitted the request.
      expect(refused.headers['ratelimit-policy']).toBe('"default";q=100;w=60');
    });

    it('answers an enforce refusal with the legacy fields of the refusing rule in legacy mode', async () => {
      const refused = await exhaustReports(await start('legacy'));
      expect(refused.headers['retry-after']).toBe('40');
      expect(refused.headers['x-ratelimit-limit']).toBe('2');
      expect(refused.headers['x-ratelimit-remaining']).toBe('0');
      expect(refused.headers['x-ratelimit-reset']).toBe('60');
    });

    it('answers an exception built from peeked decisions with Retry-After and the fields of the refusing rule', async () => {
      const refused = await lockAlice(await start());
      // The first failure, two minutes ago, leaves the 15-minute window in 13 minutes.
      expect(refused.body).toEqual({ statusCode: 429, message: 'Too many failed logins', retryAfter: 13 * 60 });
      expect(refused.headers['retry-after']).toBe(String(13 * 60));
      expect(refused.headers['ratelimit-policy']).toBe('"login-user";q=2;w=900');
      expect(refused.headers['ratelimit']).toBe('"login-user";r=0;t=840');
    });

    it('answers an exception without decisions with Retry-After alone, dropping the fields the guard set', async () => {
      const refused = await request(await start()).get('/maintenance').expect(429);
      expect(refused.body).toEqual({ statusCode: 429, message: 'Back in a moment', retryAfter: 5 });
      expect(refused.headers['retry-after']).toBe('5');
      expect(refused.headers['ratelimit']).toBeUndefined();
      expect(refused.headers['ratelimit-policy']).toBeUndefined();
    });

    it('counts a refusal found by peek once, under the refusing rule, when the client receives it', async () => {
      const server = await start();
      await lockAlice(server);
      expect(await rejected('login-user')).toBe(1);
      await request(server).post('/login').send({ username: 'alice', password: 'right' }).expect(429);
      expect(await rejected('login-user')).toBe(2);
      expect(await rejected('login-ip')).toBe(0);
    });

    it('leaves a 429 from business code to the app\'s own catch-all filter, with Retry-After and the refusing rule\'s fields', async () => {
      AppErrorsFilter.seen = [];
      const refused = await exhaustReports(await start('draft', [{ provide: APP_FILTER, useClass: AppErrorsFilter }]));
      expect(refused.body).toEqual({ error: 429 });
      expect(AppErrorsFilter.seen).toHaveLength(1);
      expect(refused.headers['retry-after']).toBe('40');
      expect(refused.headers['ratelimit-policy']).toBe('"reports";q=2;w=60');
    });

    it('counts an enforce refusal once, not again when it reaches the client', async () => {
      await exhaustReports(await start());
      expect(await rejected('reports')).toBe(1);
    });
  });
});
