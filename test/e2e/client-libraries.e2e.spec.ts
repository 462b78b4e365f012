import { Controller, Get, type INestApplication } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { createClient, createClientPool } from 'redis';
import request from 'supertest';
import { RateLimit, RateLimitConfigError, RateLimitModule, type RateLimitModuleOptions } from '../../lib/index.js';
import { CLIENT_LIBRARIES, openClient, type ClientLibrary, type OpenClient } from '../support/redis-clients.js';
import { startRedis, uniquePrefix, type TestRedis } from '../support/redis-server.js';
import { PATIENT_TIMEOUT_MS } from '../support/store-timeout.js';
import { startApp } from './support/http-app.js';

@Controller()
class PingController {
  @Get('ping')
  @RateLimit('1m', 2, 'fixed-window')
  ping() {
    return { ok: true };
  }
}

// Two servers: the one the passed client talks to, and another that must see nothing.
let mine: TestRedis;
let other: TestRedis;
let mineAdmin: Redis;
let otherAdmin: Redis;
beforeAll(async () => {
  [mine, other] = await Promise.all([startRedis(), startRedis()]);
  mineAdmin = mine.client();
  otherAdmin = other.client();
});
afterAll(() => Promise.all([mine?.stop(), other?.stop()]));

// A loaded machine's first decisions on a client (its script load, the clock measurement) can outlast 50 ms: the
// failure policy would decide them, and these tests are about where Redis decides.
function start(options: RateLimitModuleOptions): Promise<INestApplication> {
  return startApp('express', { imports: [RateLimitModule.forRoot({ timeoutMs: PATIENT_TIMEOUT_MS, ...options, globalGuard: true })], controllers: [PingController] });
}

async function startUpError(starting: Promise<unknown>): Promise<RateLimitConfigError> {
  const error = await starting.then(() => new Error('the application started'), (e: unknown) => e);
  expect(error).toBeInstanceOf(RateLimitConfigError);
  return error as RateLimitConfigError;
}

describe.each<ClientLibrary>(CLIENT_LIBRARIES)('a %s client passed as store', (library) => {
  let opened: OpenClient;
  let app: INestApplication | undefined;
  beforeAll(async () => {
    opened = await openClient(library, mine.port);
  });
  afterAll(() => opened.close());
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  it('decides through that client: the keys are on its server, none on another, and it stays open after app.close()', async () => {
    const keyPrefix = uniquePrefix('lib');
    app = await start({ store: opened.client, keyPrefix });
    await request(app.getHttpServer()).get('/ping').expect(200);
    await request(app.getHttpServer()).get('/ping').expect(200);
    await request(app.getHttpServer()).get('/ping').expect(429);
    expect(await mineAdmin.keys(`${keyPrefix}:*`)).not.toHaveLength(0);
    expect(await otherAdmin.keys(`${keyPrefix}:*`)).toHaveLength(0);
    await app.close();
    app = undefined;
    const ping = library === 'iovalkey' ? (opened.client as unknown as Redis).ping() : (opened.client as ReturnType<typeof createClient>).ping();
    expect(await ping).toBe('PONG');
  });
});

describe('a store the module cannot use', () => {
  it('refuses an object of another class, naming store, the class and what is accepted', async () => {
    class RedisLookalike {
      host = '127.0.0.1';
    }
    const error = await startUpError(start({ store: new RedisLookalike() as unknown as RateLimitModuleOptions['store'] }));
    expect(error.field).toBe('store');
    expect(error.message).toContain('an object of class RedisLookalike');
    expect(error.message).toContain('node-redis 5/6 client');
  });

  it('refuses a node-redis client pool, which is no connection a script call can follow', async () => {
    const pool = createClientPool({ url: mine.url });
    const error = await startUpError(start({ store: pool as unknown as RateLimitModuleOptions['store'] }));
    expect(error.message).toContain('a node-redis client pool');
  });

  it('refuses a node-redis client that was never connected, saying to call connect() first, and opens nothing itself', async () => {
    const client = createClient({ url: other.url });
    const error = await startUpError(start({ store: client }));
    expect(error.message).toContain('a node-redis client that is not open');
    expect(error.message).toContain('await client.connect()');
    expect(client.isOpen).toBe(false);
  });
});
