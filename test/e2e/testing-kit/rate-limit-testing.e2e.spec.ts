import type { INestApplication } from '@nestjs/common';
import type { Redis } from 'ioredis';
import request from 'supertest';
import { defineRule, RateLimitConfigError, RateLimitService, type RateLimitModuleOptions } from 'nestjs-redis-rate-limit';
import { RateLimitTesting, RateLimitTestingError, TEST_CLOCK_START_MS } from 'nestjs-redis-rate-limit/testing';
import { startRedis, uniquePrefix, type TestRedis } from '../../support/redis-server.js';
import { PATIENT_TIMEOUT_MS } from '../../support/store-timeout.js';
import { kitModule, startKitApp } from './kit-app.fixture.js';

type Kind = 'memory' | 'redis';

let redis: TestRedis | undefined;
let client: Redis;
beforeAll(async () => {
  redis = await startRedis();
  client = redis.client();
});
afterAll(async () => {
  await redis?.stop();
});

describe.each<Kind>(['memory', 'redis'])('RateLimitTesting on the %s store', (kind) => {
  let app: INestApplication;
  let limits: RateLimitTesting;
  let keyPrefix: string;
  const items = () => request(app.getHttpServer()).get('/items');
  const login = (user = 'alice') => request(app.getHttpServer()).post(`/login/${user}`);
  const storeOptions = (): RateLimitModuleOptions => (kind === 'memory' ? { store: 'memory' } : { store: client, timeoutMs: PATIENT_TIMEOUT_MS });

  beforeAll(async () => {
    keyPrefix = uniquePrefix('kit');
    app = await startKitApp('express', kitModule({ ...storeOptions(), keyPrefix }));
    limits = RateLimitTesting.from(app);
  });
  afterAll(async () => {
    await app.close();
  });
  beforeEach(async () => {
    await limits.reset();
  });

  it('decides on the test clock, which stands still until the test moves it', async () => {
    expect(limits.clock.now()).toBe(TEST_CLOCK_START_MS);
    await items().expect(200);
    await items().expect(200);
    limits.expectRateLimited(await items(), { rule: 'default', retryAfter: 60 });
    limits.advance('59s');
    limits.expectRateLimited(await items(), { retryAfter: 1 });
    limits.advance(1000);
    await items().expect(200);
  });

  it('forgets every count and lockout on reset()', async () => {
    for (let i = 0; i < 2; i++) await items().expect(200);
    await items().expect(429);
    await login().expect(201);
    await login().expect(201);
    await login().expect(429);
    await request(app.getHttpServer()).get('/export').expect(200);
    // The second refusal of the export rule locks the tracker out for 10 minutes.
    limits.expectRateLimited(await request(app.getHttpServer()).get('/export'), { rule: 'export' });
    await limits.reset();
    await items().expect(200);
    await login().expect(201);
    await request(app.getHttpServer()).get('/export').expect(200);
  });

  it('raises a named rule with setRule() for this test only: reset() puts it back', async () => {
    const policy = limits.setRule('login', { limit: 5 });
    expect(policy.rule).toMatchObject({ name: 'login', limit: 5, windowMs: 60_000, algorithm: 'sliding-log' });
    for (let i = 0; i < 5; i++) await login().expect(201);
    await login().expect(429);
    await limits.reset();
    await login().expect(201);
    await login().expect(201);
    await login().expect(429);
  });

  it('raises the default rule with setRule("default"), and puts it back on reset()', async () => {
    limits.setRule('default', { limit: 3 });
    limits.setRule('default', { window: '10s' });
    for (let i = 0; i < 3; i++) await items().expect(200);
    limits.expectRateLimited(await items(), { retryAfter: 10 });
    await limits.reset();
    const res = await items().expect(200);
    expect(res.headers['ratelimit-policy']).toBe('"default";q=2;w=60');
  });

  it('refuses setRule() of a rule that is not configured, naming those that are', () => {
    expect(() => limits.setRule('logn', { limit: 5 })).toThrow(RateLimitTestingError);
    expect(() => limits.setRule('logn', { limit: 5 })).toThrow('no rule of that name is configured (login, default)');
  });

  it('refuses an invalid change with RateLimitConfigError naming the field, and keeps the rule', async () => {
    expect(() => limits.setRule('login', { limit: 0 })).toThrow(RateLimitConfigError);
    expect(() => limits.setRule('login', { limit: 0 })).toThrow('rules.login.limit');
    await login().expect(201);
    await login().expect(201);
    await login().expect(429);
  });

  it('switches every rule off with disable(): the guard and business code admit, and nothing is counted', async () => {
    await items().expect(200);
    limits.disable();
    expect(limits.enabled).toBe(false);
    for (let i = 0; i < 5; i++) {
      const res = await items().expect(200);
      expect(res.headers['ratelimit']).toBe('"default";r=2;t=0');
    }
    for (let i = 0; i < 5; i++) await login().expect(201);
    limits.enable();
    await items().expect(200);
    await items().expect(429);
    await login().expect(201);
    await login().expect(201);
    await login().expect(429);
  });

  it('grants leases of a concurrency rule while limits are off, holding no slot', async () => {
    const service = app.get(RateLimitService);
    const slots = defineRule({ algorithm: 'concurrency', limit: 1 }, 'slots');
    const held = await service.acquire('alice', slots);
    expect(held.acquired).toBe(true);
    expect((await service.acquire('alice', slots)).acquired).toBe(false);
    limits.disable();
    const free = await service.acquire('alice', slots);
    expect(free).toMatchObject({ acquired: true, limit: 1, retryAfterMs: 0 });
    await free.lease!.release();
    limits.enable();
    expect((await service.acquire('alice', slots)).acquired).toBe(false);
    await held.lease!.release();
  });

  it('frees the slots of concurrency rules on reset()', async () => {
    const service = app.get(RateLimitService);
    const slots = defineRule({ algorithm: 'concurrency', limit: 1 }, 'slots');
    const held = await service.acquire('alice', slots);
    expect((await service.acquire('alice', slots)).acquired).toBe(false);
    await limits.reset();
    const again = await service.acquire('alice', slots);
    expect(again.acquired).toBe(true);
    await Promise.all([held.lease!.release(), again.lease!.release()]);
  });

  it('admits a request refused before disable(), though the refusal was remembered', async () => {
    for (let i = 0; i < 2; i++) await items().expect(200);
    await items().expect(429);
    limits.disable();
    await items().expect(200);
  });

  it('switches limits back on at reset()', async () => {
    limits.disable();
    await limits.reset();
    expect(limits.enabled).toBe(true);
    await login().expect(201);
    await login().expect(201);
    await login().expect(429);
  });

  if (kind === 'redis') {
    it('erases every key under the module\'s keyPrefix on reset(), and no other key', async () => {
      await items().expect(200);
      await login().expect(201);
      await client.set(`${keyPrefix}x:default:{other}`, '1');
      await client.set(`other:${keyPrefix}:default:{other}`, '1');
      expect((await client.keys(`${keyPrefix}:*`)).length).toBeGreaterThanOrEqual(2);
      await limits.reset();
      expect(await client.keys(`${keyPrefix}:*`)).toEqual([]);
      expect(await client.exists(`${keyPrefix}x:default:{other}`, `other:${keyPrefix}:default:{other}`)).toBe(2);
    });

    it('erases more keys than one SCAN page holds', async () => {
      const keys = Array.from({ length: 2500 }, (_, i) => `${keyPrefix}:default:{t${i}}`);
      await client.mset(...keys.flatMap((k) => [k, '1']));
      await limits.reset();
      expect(await client.keys(`${keyPrefix}:*`)).toEqual([]);
    });
  }
});

describe('RateLimitTesting.disable() with NODE_ENV=production', () => {
  let app: INestApplication;
  let limits: RateLimitTesting;
  const saved = process.env.NODE_ENV;
  beforeAll(async () => {
    app = await startKitApp('express', kitModule({ store: 'memory' }));
    limits = RateLimitTesting.from(app);
  });
  afterEach(() => {
    process.env.NODE_ENV = saved;
  });
  afterAll(async () => {
    await app.close();
  });

  it('refuses, naming NODE_ENV and what to do', () => {
    process.env.NODE_ENV = 'production';
    expect(() => limits.disable()).toThrow(RateLimitTestingError);
    expect(() => limits.disable()).toThrow(/refuses to run with NODE_ENV=production: .*Run your tests with NODE_ENV=test/);
  });

  it('leaves the limits on', async () => {
    process.env.NODE_ENV = 'production';
    expect(() => limits.disable()).toThrow();
    expect(limits.enabled).toBe(true);
    await request(app.getHttpServer()).get('/items').expect(200);
    await request(app.getHttpServer()).get('/items').expect(200);
    await request(app.getHttpServer()).get('/items').expect(429);
  });

  it('still lets a test move the clock, reset keys and raise rules', async () => {
    process.env.NODE_ENV = 'production';
    await limits.reset();
    limits.setRule('default', { limit: 3 });
    limits.advance('1m');
    for (let i = 0; i < 3; i++) await request(app.getHttpServer()).get('/items').expect(200);
    await limits.reset();
  });
});

describe('RateLimitTesting.from()', () => {
  it('explains how to install the kit when the app was compiled without it', async () => {
    const app = await startKitApp('express', kitModule({ store: 'memory' }), false);
    try {
      expect(() => RateLimitTesting.from(app)).toThrow('RateLimitTesting.install(Test.createTestingModule({ imports: [AppModule] })).compile()');
    } finally {
      await app.close();
    }
  });

  it('starts the clock where install() says', async () => {
    const app = await startKitApp('express', kitModule({ store: 'memory' }), { startMs: 1_000_000 });
    try {
      expect(RateLimitTesting.from(app).clock.now()).toBe(1_000_000);
    } finally {
      await app.close();
    }
  });

  it('refuses to move the clock back', async () => {
    const app = await startKitApp('express', kitModule({ store: 'memory' }));
    try {
      expect(() => RateLimitTesting.from(app).advance(-1)).toThrow(RateLimitConfigError);
    } finally {
      await app.close();
    }
  });
});
