import type { INestApplication } from '@nestjs/common';
import { AssertionError } from 'node:assert';
import request from 'supertest';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expectRateLimited, RateLimitTesting } from 'nestjs-redis-rate-limit/testing';
import { assertBuilt, REPO_ROOT } from '../../compat/sandbox.js';
import { PLATFORMS } from '../support/http-app.js';
import { kitModule, startKitApp } from './kit-app.fixture.js';

describe.each(PLATFORMS)('expectRateLimited on %s', (platform) => {
  let app: INestApplication;
  let legacy: INestApplication;
  beforeAll(async () => {
    app = await startKitApp(platform, kitModule({ store: 'memory' }));
    legacy = await startKitApp(platform, kitModule({ store: 'memory', headers: 'legacy' }));
  });
  afterAll(async () => {
    await Promise.all([app.close(), legacy.close()]);
  });
  beforeEach(async () => {
    await Promise.all([RateLimitTesting.from(app).reset(), RateLimitTesting.from(legacy).reset()]);
  });
  /** The third request of a minute, which the default rule (2 a minute) refuses. */
  async function refused(target = app): Promise<request.Response> {
    await request(target.getHttpServer()).get('/items').expect(200);
    await request(target.getHttpServer()).get('/items').expect(200);
    return request(target.getHttpServer()).get('/items');
  }

  it('accepts the module\'s 429 in a supertest response, and returns what it said', async () => {
    const said = expectRateLimited(await refused(), { rule: 'default', retryAfter: 60, message: 'Too Many Requests' });
    expect(said).toEqual({
      retryAfter: 60,
      rules: [{ rule: 'default', remaining: 0, resetSeconds: expect.any(Number) }],
      body: { statusCode: 429, message: 'Too Many Requests', retryAfter: 60 },
    });
  });

  it('accepts a refusal by business code (RateLimitService.enforce) with its rule', async () => {
    const login = () => request(app.getHttpServer()).post('/login/alice');
    await login().expect(201);
    await login().expect(201);
    expectRateLimited(await login(), { rule: 'login', retryAfter: 60 });
  });

  it('checks the headers of the app\'s own mode when taken from RateLimitTesting', async () => {
    const res = await refused(legacy);
    expect(res.headers['ratelimit']).toBeUndefined();
    expect(RateLimitTesting.from(legacy).expectRateLimited(res).retryAfter).toBe(60);
    expect(() => expectRateLimited(res)).toThrow('expected a ratelimit-policy header on the 429, got none');
  });

  it('fails on a response that is not a 429, saying what it got', async () => {
    const res = await request(app.getHttpServer()).get('/items');
    expect(() => expectRateLimited(res)).toThrow(AssertionError);
    expect(() => expectRateLimited(res)).toThrow('expected a 429 refusal, got 200: ["a","b"]');
  });

  it('fails on a 429 without Retry-After', async () => {
    const res = await request(app.getHttpServer()).get('/home-made-429');
    expect(res.status).toBe(429);
    expect(() => expectRateLimited(res)).toThrow('expected a Retry-After of whole seconds on the 429, got undefined');
  });

  it('fails on a 429 of another rule or another wait than expected', async () => {
    const res = await refused();
    expect(() => expectRateLimited(res, { rule: 'login' })).toThrow('expected the rule "login" in RateLimit, got "default";r=0;t=');
    expect(() => expectRateLimited(res, { retryAfter: 30 })).toThrow('expected Retry-After: 30, got 60');
    expect(() => expectRateLimited(res, { message: 'Slow down' })).toThrow('expected the body\'s message "Slow down", got "Too Many Requests"');
  });
});

describe("expectRateLimited on Fastify's inject() responses (the built package, in plain Node)", () => {
  let report: Record<string, unknown>;
  beforeAll(() => {
    assertBuilt();
    const child = fileURLToPath(new URL('./fastify-inject.child.mjs', import.meta.url));
    report = JSON.parse(execFileSync(process.execPath, [child], { cwd: REPO_ROOT, encoding: 'utf8' })) as Record<string, unknown>;
  }, 60_000);

  it('accepts the refusal, whose body inject() leaves as text', () => {
    expect(report.bodyType).toBe('string');
    expect(report.refused).toEqual({
      passed: { retryAfter: 60, rules: [{ rule: 'default', remaining: 0, resetSeconds: 60 }], body: { statusCode: 429, message: 'Too Many Requests', retryAfter: 60 } },
    });
  });

  it('fails on an admitted request, saying it got a 200', () => {
    expect(report.admitted).toEqual({ failed: 'AssertionError: expected a 429 refusal, got 200: ["a","b"]' });
  });

  it('loads nestjs-redis-rate-limit/testing by name, and its clock moves the app\'s limits', () => {
    expect(report.afterAdvance).toBe(200);
  });
});
