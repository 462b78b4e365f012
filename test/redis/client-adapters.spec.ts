import { jest } from '@jest/globals';
import { Decoder, GlideClient } from '@valkey/valkey-glide';
import type { Redis } from 'ioredis';
import net from 'node:net';
import { createClient, RESP_TYPES } from 'redis';
import { defineRule, RedisStore, type RedisClientLike } from '../../lib/index.js';
import { CLIENT_LIBRARIES, openClient, type ClientLibrary, type OpenClient } from '../support/redis-clients.js';
import { commandCalls, scriptCalls, startRedis, uniquePrefix, type TestRedis } from '../support/redis-server.js';

const RULE = defineRule({ algorithm: 'fixed-window', limit: 5, window: 60_000 }, 'fw');

let redis: TestRedis;
let admin: Redis;
beforeAll(async () => {
  redis = await startRedis({ own: true });
  admin = redis.client();
});
afterAll(() => redis?.stop());

describe.each<ClientLibrary>(CLIENT_LIBRARIES)('a RedisStore through a %s client', (library) => {
  let opened: OpenClient;
  beforeAll(async () => {
    opened = await openClient(library, redis.port);
  });
  afterAll(() => opened?.close());

  it('decides on Redis after a SCRIPT FLUSH, by one NOSCRIPT and one resend of the source, counting the call once', async () => {
    // EVALSHA only: with the function library loaded, a SCRIPT FLUSH would not touch the FCALL (below).
    const store = new RedisStore(opened.client, { keyPrefix: uniquePrefix(), functions: false });
    expect((await store.consume('k', RULE)).remaining).toBe(4);
    await admin.script('FLUSH');
    await admin.config('RESETSTAT');
    expect((await store.consume('k', RULE)).remaining).toBe(3);
    const stats = `${await admin.info('commandstats')}${await admin.info('errorstats')}`;
    expect(commandCalls(stats, 'evalsha')).toBe(1);
    expect(commandCalls(stats, 'eval')).toBe(1);
    expect(stats).toMatch(/^errorstat_NOSCRIPT:count=1\b/m);
  });

  it('decides on Redis after a SCRIPT FLUSH and a FUNCTION FLUSH, by one call answered NOSCRIPT or "Function not found" and one resend of the source', async () => {
    const store = new RedisStore(opened.client, { keyPrefix: uniquePrefix() });
    expect((await store.consume('k', RULE)).remaining).toBe(4);
    expect((await store.consume('k', RULE)).remaining).toBe(3);
    await Promise.all([admin.script('FLUSH'), admin.call('FUNCTION', 'FLUSH')]);
    await admin.config('RESETSTAT');
    expect((await store.consume('k', RULE)).remaining).toBe(2);
    const stats = await admin.info('commandstats');
    expect(commandCalls(stats, 'evalsha') + commandCalls(stats, 'fcall')).toBe(1);
    expect(commandCalls(stats, 'eval')).toBe(1);
    expect(/^cmdstat_eval:.*failed_calls=0\b/m.test(stats)).toBe(true);
  });

  it('decides on Redis with timeoutMs set, once its clock is read through the client for the deadlines', async () => {
    const store = new RedisStore(opened.client, { keyPrefix: uniquePrefix(), timeoutMs: 5_000 });
    // The first call starts the clock measurement; later ones carry a deadline in Redis's clock.
    await store.consume('k', RULE);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect((await store.consume('k', RULE)).remaining).toBe(3);
    expect((await store.peek('k', RULE, 0)).remaining).toBe(3);
  });

  it('resets a key through the client', async () => {
    const store = new RedisStore(opened.client, { keyPrefix: uniquePrefix() });
    await store.consume('k', RULE, 4);
    await store.reset('k', RULE);
    expect((await store.peek('k', RULE, 0)).remaining).toBe(5);
  });
});

describe('a client whose replies are mapped to other types', () => {
  async function decides(client: RedisClientLike): Promise<number[]> {
    const store = new RedisStore(client, { keyPrefix: uniquePrefix(), timeoutMs: 5_000 });
    const remaining: number[] = [];
    for (let i = 0; i < 3; i++) remaining.push((await store.consume('k', RULE)).remaining);
    return remaining;
  }

  it('decides the same through a node-redis client mapping integers to strings and strings to Buffers', async () => {
    const base = createClient({ url: redis.url });
    await base.connect();
    try {
      const mapped = base.withTypeMapping({ [RESP_TYPES.NUMBER]: String, [RESP_TYPES.BLOB_STRING]: Buffer });
      expect(await decides(mapped)).toEqual([4, 3, 2]);
    } finally {
      base.destroy();
    }
  });

  it('decides the same through a GLIDE client whose default decoder gives Buffers', async () => {
    const client = await GlideClient.createClient({ addresses: [{ host: '127.0.0.1', port: redis.port }], defaultDecoder: Decoder.Bytes, requestTimeout: 5_000 });
    try {
      expect(await decides(client)).toEqual([4, 3, 2]);
    } finally {
      client.close();
    }
  });
});

it('puts a node-redis 6 client\'s keyPrefix before the keys, as its own commands do', async () => {
  const client = createClient({ url: redis.url, keyPrefix: 'tenant-7:' });
  await client.connect();
  try {
    const keyPrefix = uniquePrefix();
    await new RedisStore(client, { keyPrefix }).consume('k', RULE);
    expect(await admin.keys(`tenant-7:${keyPrefix}:*`)).toHaveLength(1);
    expect(await admin.keys(`${keyPrefix}:*`)).toHaveLength(0);
  } finally {
    client.destroy();
  }
});

describe.each(['node-redis 5', 'node-redis 6'] as const)('coalescing on a %s client, which writes from a setImmediate of its own', (library) => {
  it('writes the calls made in the turn of a lone call in the same write as it, not a turn later', async () => {
    const opened = await openClient(library, redis.port);
    const cork = jest.spyOn(net.Socket.prototype, 'cork');
    try {
      const store = new RedisStore(opened.client, { keyPrefix: uniquePrefix() });
      await store.consume('warm', RULE);
      await admin.config('RESETSTAT');
      cork.mockClear();
      // The first goes alone (nothing in flight), the three after it in a batch: node-redis corks its socket once per write.
      const decisions = await Promise.all(['a', 'b', 'c', 'd'].map((key) => store.consume(key, RULE)));
      expect(decisions.map((d) => d.remaining)).toEqual([4, 4, 4, 4]);
      expect(await scriptCalls(admin)).toBe(2);
      expect(cork).toHaveBeenCalledTimes(1);
    } finally {
      cork.mockRestore();
      await opened.close();
    }
  });

  it('writes each batch closed while the client holds another for its next write in a write of its own, a turn later', async () => {
    // Written together, a turn's batches were answered together, and the app and Redis took turns waiting for each
    // other: at 200 decisions in flight node-redis decided 0.6-0.7x as many per second as ioredis.
    const opened = await openClient(library, redis.port);
    const cork = jest.spyOn(net.Socket.prototype, 'cork');
    try {
      const store = new RedisStore(opened.client, { keyPrefix: uniquePrefix(), coalesce: { maxBatch: 2 } });
      await store.consume('warm', RULE);
      await admin.config('RESETSTAT');
      cork.mockClear();
      // 'a' goes alone and 'b', 'c' (a full batch) in its write; 'd', 'e' and 'f', 'g' close while the client holds
      // that write, and go in one write each.
      const decisions = await Promise.all(['a', 'b', 'c', 'd', 'e', 'f', 'g'].map((key) => store.consume(key, RULE)));
      expect(decisions.map((d) => d.remaining)).toEqual([4, 4, 4, 4, 4, 4, 4]);
      expect(await scriptCalls(admin)).toBe(4);
      expect(cork).toHaveBeenCalledTimes(3);
    } finally {
      cork.mockRestore();
      await opened.close();
    }
  });
});

describe('the most calls a coalesced script call decides, when the app sets no coalesce.maxBatch', () => {
  async function scriptCallsFor(library: ClientLibrary, calls: number): Promise<number> {
    const opened = await openClient(library, redis.port);
    try {
      const store = new RedisStore(opened.client, { keyPrefix: uniquePrefix() });
      await store.consume('warm', RULE);
      await admin.config('RESETSTAT');
      await Promise.all(Array.from({ length: calls }, (_, i) => store.consume(`k${i}`, RULE)));
      return await scriptCalls(admin);
    } finally {
      await opened.close();
    }
  }

  it('is 128 on a GLIDE client, whose cost per command makes larger batches pay: 257 calls in one turn go as 3', async () => {
    // The first alone, then 256 in two batches.
    expect(await scriptCallsFor('GLIDE', 257)).toBe(3);
  });

  it('is 64 on the other clients: 257 calls in one turn go as 5', async () => {
    expect(await scriptCallsFor('node-redis 6', 257)).toBe(5);
  });
});

describe('node-redis 6\'s per-command timer', () => {
  // node-redis 6 arms an AbortSignal.timeout (its default 5 s) for every command until it is written: a timer that
  // cost more app CPU than the decision. The script calls carry their own deadline, so the adapter sends them untimed,
  // unless the user gave the client a timeout of their own.
  async function timersArmedFor(decisions: number, options: Parameters<typeof createClient>[0]): Promise<number> {
    const client = createClient({ url: redis.url, ...options });
    await client.connect();
    const timeout = jest.spyOn(AbortSignal, 'timeout');
    try {
      const store = new RedisStore(client, { keyPrefix: uniquePrefix() });
      await store.consume('warm', RULE);
      timeout.mockClear();
      await Promise.all(Array.from({ length: decisions }, (_, i) => store.consume(`k${i}`, RULE)));
      return timeout.mock.calls.length;
    } finally {
      timeout.mockRestore();
      client.destroy();
    }
  }

  it('is not armed for the script calls of a client left at node-redis\'s default timeout', async () => {
    expect(await timersArmedFor(20, {})).toBe(0);
  });

  it('is kept for the script calls of a client given a timeout of its own', async () => {
    expect(await timersArmedFor(20, { commandOptions: { timeout: 2_000 } })).toBeGreaterThan(0);
  });
});
