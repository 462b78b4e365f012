import { jest } from '@jest/globals';
import { Logger } from '@nestjs/common';
import { GlideClient } from '@valkey/valkey-glide';
import { Redis as IoValkey } from 'iovalkey';
import { createClient } from 'redis';
import { RateLimitModule, type RateLimitModuleOptions } from '../../lib/index.js';
import { startRedis, uniquePrefix, type TestRedis } from '../support/redis-server.js';
import { startApp } from './support/http-app.js';

/**
 * A client passed in keeps its own settings. Those that let a command run after the app gave up on it, or twice,
 * are said once at start-up, naming the client library and the setting.
 */
let redis: TestRedis;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(() => redis?.stop());

async function startupWarnings(store: RateLimitModuleOptions['store'], timeoutMs?: number): Promise<string[]> {
  const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
  try {
    const app = await startApp('express', { imports: [RateLimitModule.forRoot({ store, timeoutMs, keyPrefix: uniquePrefix(), metrics: false })] });
    await app.close();
    return warn.mock.calls.map(([message]) => String(message));
  } finally {
    warn.mockRestore();
  }
}

describe('a node-redis client passed as store', () => {
  it('is warned of once when its offline queue is on (the default), naming node-redis and disableOfflineQueue', async () => {
    const client = createClient({ url: redis.url });
    await client.connect();
    try {
      const warnings = await startupWarnings(client);
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toMatch(/^The node-redis client passed as "store" has disableOfflineQueue is not set/);
    } finally {
      client.destroy();
    }
  });

  it('is not warned of with disableOfflineQueue: true', async () => {
    const client = createClient({ url: redis.url, disableOfflineQueue: true });
    await client.connect();
    try {
      expect(await startupWarnings(client)).toEqual([]);
    } finally {
      client.destroy();
    }
  });
});

describe('an iovalkey client passed as store', () => {
  it('is warned of with ioredis\'s defaults, naming iovalkey and each setting', async () => {
    const client = new IoValkey({ port: redis.port, host: '127.0.0.1' });
    try {
      const warnings = await startupWarnings(client);
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toMatch(/^The iovalkey client passed as "store" has enableOfflineQueue is on.*autoResendUnfulfilledCommands is on.*maxRetriesPerRequest is 20/);
    } finally {
      client.disconnect();
    }
  });
});

describe('a GLIDE client passed as store', () => {
  it('is warned of when its requestTimeout is shorter than timeoutMs, naming GLIDE and requestTimeout', async () => {
    const client = await GlideClient.createClient({ addresses: [{ host: '127.0.0.1', port: redis.port }], requestTimeout: 40 });
    try {
      const warnings = await startupWarnings(client, 100);
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toMatch(/^The GLIDE client passed as "store" has requestTimeout is 40 ms, shorter than timeoutMs \(100 ms\)/);
    } finally {
      client.close();
    }
  });

  it('is not warned of with GLIDE\'s default requestTimeout (250 ms) and the default timeoutMs (50 ms)', async () => {
    const client = await GlideClient.createClient({ addresses: [{ host: '127.0.0.1', port: redis.port }] });
    try {
      expect(await startupWarnings(client)).toEqual([]);
    } finally {
      client.close();
    }
  });
});
