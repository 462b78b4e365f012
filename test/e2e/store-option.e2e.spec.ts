import { Controller, Get, type INestApplication } from '@nestjs/common';
import type { Redis } from 'ioredis';
import request from 'supertest';
import { RateLimit, RateLimitConfigError, RateLimitModule, type RateLimitModuleExtras, type RateLimitModuleOptions } from '../../lib/index.js';
import { startRedis, uniquePrefix, type TestRedis } from '../support/redis-server.js';
import { PATIENT_TIMEOUT_MS } from '../support/store-timeout.js';
import { PLATFORMS, startApp, type Platform } from './support/http-app.js';
import { waitFor } from './support/rate-limit-config.js';

@Controller()
class PingController {
  @Get('ping')
  @RateLimit('1m', 2, 'sliding-log')
  ping() {
    return { ok: true };
  }
}

// A server of our own: the tests count its connections.
let redis: TestRedis;
let admin: Redis;
beforeAll(async () => {
  redis = await startRedis({ own: true });
  admin = redis.client({ connectionName: 'test-admin' });
});
afterAll(() => redis.stop());

/** Names of the connections the server holds now (`''` for a client that set none). */
async function connectionNames(): Promise<string[]> {
  const list = (await admin.client('LIST')) as string;
  return list.trim().split('\n').map((line) => /(?:^| )name=(\S*)/.exec(line)?.[1] ?? '');
}
/** Connections other than the test's own clients (named "test-admin" and "mine..."): the module's. */
const moduleConnections = async () => (await connectionNames()).filter((name) => name !== 'test-admin' && !name.startsWith('mine'));
const noModuleConnection = async () => (await moduleConnections()).length === 0;

function start(platform: Platform, options: RateLimitModuleOptions & RateLimitModuleExtras): Promise<INestApplication> {
  return startApp(platform, { imports: [RateLimitModule.forRoot({ timeoutMs: PATIENT_TIMEOUT_MS, ...options })], controllers: [PingController] });
}

async function expectLimits(app: INestApplication) {
  await request(app.getHttpServer()).get('/ping').expect(200);
  await request(app.getHttpServer()).get('/ping').expect(200);
  await request(app.getHttpServer()).get('/ping').expect(429);
}

async function startUpError(starting: Promise<unknown>): Promise<RateLimitConfigError> {
  const error = await starting.then(() => new Error('the application started'), (e: unknown) => e);
  expect(error).toBeInstanceOf(RateLimitConfigError);
  return error as RateLimitConfigError;
}

describe.each(PLATFORMS)('the store option on %s', (platform) => {
  let app: INestApplication | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
    // Every test starts with no module connection left, so that counting them means something.
    await waitFor('the module clients to be closed', noModuleConnection);
  });

  it('creates a client from a redis:// URL, decides in Redis with it, and closes it on app.close()', async () => {
    const keyPrefix = uniquePrefix('url');
    app = await start(platform, { store: redis.url, keyPrefix, globalGuard: true });
    await expectLimits(app);
    expect(await moduleConnections()).toEqual(['']);
    expect(await admin.keys(`${keyPrefix}:*`)).not.toHaveLength(0);
    await app.close();
    app = undefined;
    await waitFor('the module to close its connection', noModuleConnection);
  });

  it('creates a client from ioredis options and closes it on app.close()', async () => {
    const connectionName = uniquePrefix('opts');
    app = await start(platform, { store: { host: '127.0.0.1', port: redis.port, connectionName }, keyPrefix: uniquePrefix('opts'), globalGuard: true });
    await expectLimits(app);
    expect(await connectionNames()).toContain(connectionName);
    await app.close();
    app = undefined;
    await waitFor('the module to close its connection', async () => !(await connectionNames()).includes(connectionName));
  });

  it('leaves a client the application passed in open on app.close()', async () => {
    const connectionName = uniquePrefix('mine');
    const client = redis.client({ connectionName });
    app = await start(platform, { store: client, keyPrefix: uniquePrefix('mine'), globalGuard: true });
    await expectLimits(app);
    await app.close();
    app = undefined;
    expect(client.status).toBe('ready');
    expect(await client.ping()).toBe('PONG');
    expect(await connectionNames()).toContain(connectionName);
  });

  it.each([['memory' as const], [undefined]])('limits in memory with store %j, opening no connection', async (store) => {
    app = await start(platform, { store, globalGuard: true });
    await expectLimits(app);
    expect(await moduleConnections()).toEqual([]);
  });

  it.each([['mysql://127.0.0.1:3306'], ['memroy'], ['127.0.0.1:6379'], [42], [true], [null]])('refuses the store %j, naming "store"', async (store) => {
    const error = await startUpError(start(platform, { store: store as never }));
    expect(error.field).toBe('store');
    expect(error.message).toMatch(/^Invalid rate limit option "store": .* \(expected "memory", a redis:\/\/ /);
  });

  it.each([
    ['http://admin:s3cret@cache.internal:6379', 'http://***@cache.internal:6379'],
    ['redis:/admin:s3cret@cache.internal:6379', 'redis:/***@cache.internal:6379'],
    ['valkey://admin:s3/cret@cache.internal:6379', 'valkey://***@cache.internal:6379'],
    ['redis//cache.internal:6379?db=1&password=s3cret', 'redis//cache.internal:6379?db=1&password=***'],
  ])('keeps the password of the refused URL %j out of the error', async (url, shown) => {
    const error = await startUpError(start(platform, { store: url }));
    expect(error.message).not.toContain('s3');
    expect(error.message).toContain(JSON.stringify(shown));
    expect(error.value).toBe(shown);
  });

  it('accepts a redis URL whose scheme is written in capitals', async () => {
    app = await start(platform, { store: redis.url.replace('redis://', 'REDIS://'), keyPrefix: uniquePrefix('caps'), globalGuard: true });
    await expectLimits(app);
  });
});
