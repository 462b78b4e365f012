import { jest } from '@jest/globals';
import { Controller, Get, Logger, type INestApplication } from '@nestjs/common';
import type { Redis } from 'ioredis';
import request from 'supertest';
import { RateLimit, RateLimitConfigError, RateLimitModule, type RateLimitModuleOptions } from '../../lib/index.js';
import { freePort, startRedis, uniquePrefix, type TestRedis } from '../support/redis-server.js';
import { PATIENT_TIMEOUT_MS } from '../support/store-timeout.js';
import { startApp } from './support/http-app.js';
import { waitFor } from './support/rate-limit-config.js';

/**
 * The client the module creates from a redis:// URL is of `clientLibrary`, or of the first library installed
 * (ioredis, iovalkey, node-redis): an app that has only node-redis gets a node-redis client, never a refusal for a
 * missing ioredis. The module connects it at bootstrap and closes it on shutdown.
 */
@Controller()
class PingController {
  @Get('ping')
  @RateLimit('1m', 2, 'sliding-log')
  ping() {
    return { ok: true };
  }
}

let redis: TestRedis;
let admin: Redis;
beforeAll(async () => {
  redis = await startRedis({ own: true });
  admin = redis.client({ connectionName: 'test-admin' });
});
afterAll(() => redis?.stop());

const moduleConnections = async () => ((await admin.client('LIST')) as string).trim().split('\n').filter((line) => !/ name=test-admin /.test(line)).length;

/** An app on these options, and what the module logged at start-up. */
async function start(options: RateLimitModuleOptions): Promise<{ app: INestApplication; logs: string[] }> {
  const logs: string[] = [];
  const log = jest.spyOn(Logger.prototype, 'log').mockImplementation((message) => void logs.push(String(message)));
  const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation((message) => void logs.push(String(message)));
  try {
    const app = await startApp('express', { imports: [RateLimitModule.forRoot({ timeoutMs: PATIENT_TIMEOUT_MS, globalGuard: true, ...options })], controllers: [PingController] });
    return { app, logs };
  } finally {
    log.mockRestore();
    warn.mockRestore();
  }
}

async function startUpError(options: RateLimitModuleOptions): Promise<RateLimitConfigError> {
  const error = await start(options).then(
    async ({ app }) => {
      await app.close();
      return new Error('the application started');
    },
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(RateLimitConfigError);
  return error as RateLimitConfigError;
}

describe.each(['ioredis', 'iovalkey', 'node-redis'] as const)('a redis:// URL with clientLibrary %s', (clientLibrary) => {
  it('creates a client of that library, decides in Redis with it, and closes it on app.close()', async () => {
    const keyPrefix = uniquePrefix('created');
    const { app, logs } = await start({ store: redis.url, clientLibrary, keyPrefix });
    try {
      expect(logs).toContain(`Rate limits are kept in Redis at ${redis.url} (${clientLibrary})`);
      await request(app.getHttpServer()).get('/ping').expect(200);
      await request(app.getHttpServer()).get('/ping').expect(200);
      await request(app.getHttpServer()).get('/ping').expect(429);
      expect(await admin.keys(`${keyPrefix}:*`)).not.toHaveLength(0);
      expect(await moduleConnections()).toBe(1);
    } finally {
      await app.close();
    }
    await waitFor('the module to close its connection', async () => (await moduleConnections()) === 0);
  });

  it('starts with Redis down, and the failure policy decides', async () => {
    const url = `redis://127.0.0.1:${await freePort()}`;
    const { app, logs } = await start({ store: url, clientLibrary, keyPrefix: uniquePrefix('down'), failurePolicy: 'open' });
    try {
      expect(logs.some((l) => l.startsWith('Redis is unavailable at start-up'))).toBe(true);
      const response = await request(app.getHttpServer()).get('/ping').expect(200);
      expect(response.body).toEqual({ ok: true });
    } finally {
      await app.close();
    }
  });
});

describe('clientLibrary', () => {
  it('is ioredis, the first library installed, when not set', async () => {
    const { app, logs } = await start({ store: redis.url, keyPrefix: uniquePrefix('default') });
    await app.close();
    expect(logs).toContain(`Rate limits are kept in Redis at ${redis.url} (ioredis)`);
  });

  it.each([['glide'], ['redis'], [42]])('refuses %j at start-up, naming the option and the libraries it may be', async (value) => {
    const error = await startUpError({ store: redis.url, clientLibrary: value as never });
    expect(error.field).toBe('clientLibrary');
    expect(error.message).toContain('"ioredis", "iovalkey", "node-redis"');
  });

  it('refuses ioredis options with node-redis, naming store and what node-redis is created from', async () => {
    const error = await startUpError({ store: { host: '127.0.0.1', port: redis.port }, clientLibrary: 'node-redis' });
    expect(error.field).toBe('store');
    expect(error.message).toContain('a redis:// URL with clientLibrary "node-redis"');
  });
});
