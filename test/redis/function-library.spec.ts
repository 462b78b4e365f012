import { Redis } from 'ioredis';
import { defineRule, RedisStore, type RedisClientLike } from '../../lib/index.js';
import { CLIENT_LIBRARIES, openClient, type ClientLibrary } from '../support/redis-clients.js';
import { commandCalls, startRedis, uniquePrefix, type TestRedis } from '../support/redis-server.js';

// RedisStore calls its decision scripts as a function library (FUNCTION LOAD once per server, then FCALL) where the
// server allows it, and by EVALSHA where it does not or until it is loaded: through every client library.
const RULE = defineRule({ algorithm: 'fixed-window', limit: 100, window: '1h' }, 'fn');
type Library = 'ioredis' | ClientLibrary;

/** A client of `library` connected to the server on `port`, and how to close it. */
async function connect(library: Library, port: number): Promise<{ client: RedisClientLike; close(): Promise<unknown> }> {
  if (library !== 'ioredis') return openClient(library, port);
  const client = new Redis({ host: '127.0.0.1', port });
  // disconnect(), not quit(): a client of a server the test stopped would wait to reconnect first.
  return { client, close: async () => client.disconnect() };
}

/** The names of the libraries the server holds. */
async function libraries(admin: Redis): Promise<string[]> {
  const list = (await admin.call('FUNCTION', 'LIST')) as unknown[][];
  return list.map((library) => String(library[library.indexOf('library_name') + 1]));
}

/** Peeks (which count nothing) until one goes as FCALL: its library is then loaded and known to the client. */
async function untilCalledAsFunction(store: RedisStore, admin: Redis): Promise<void> {
  for (let attempt = 0; attempt < 500; attempt++) {
    await admin.config('RESETSTAT');
    await store.peek('probe', RULE);
    if (commandCalls(await admin.info('commandstats'), 'fcall') === 1) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error('no call went as FCALL');
}

describe.each<Library>(['ioredis', ...CLIENT_LIBRARIES])('RedisStore on %s and Redis 7', (library) => {
  let redis: TestRedis;
  let admin: Redis;
  const clients: { close(): Promise<unknown> }[] = [];
  beforeAll(async () => {
    redis = await startRedis({ own: true });
    admin = redis.client();
  });
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close()));
    await redis.stop();
  });
  beforeEach(() => admin.call('FUNCTION', 'FLUSH'));

  async function client(port = redis.port): Promise<RedisClientLike> {
    const made = await connect(library, port);
    clients.push(made);
    return made.client;
  }

  it('decides by EVAL first, loads the library named after the script, then decides by FCALL only', async () => {
    const store = new RedisStore(await client(), { keyPrefix: uniquePrefix() });
    await admin.config('RESETSTAT');
    expect((await store.consume('k', RULE)).remaining).toBe(99);
    expect(commandCalls(await admin.info('commandstats'), 'eval')).toBe(1);
    await untilCalledAsFunction(store, admin);
    expect(await libraries(admin)).toEqual([expect.stringMatching(/^rrl_[0-9a-f]{40}$/)]);
    await admin.config('RESETSTAT');
    for (let i = 2; i <= 11; i++) expect((await store.consume('k', RULE)).remaining).toBe(100 - i);
    const stats = await admin.info('commandstats');
    expect([commandCalls(stats, 'fcall'), commandCalls(stats, 'evalsha'), commandCalls(stats, 'eval')]).toEqual([10, 0, 0]);
  });

  it('shares the library with another client and another store of the same version', async () => {
    const first = new RedisStore(await client(), { keyPrefix: uniquePrefix() });
    await first.consume('k', RULE);
    await untilCalledAsFunction(first, admin);
    const second = new RedisStore(await client(), { keyPrefix: uniquePrefix() });
    await second.consume('k', RULE);
    await untilCalledAsFunction(second, admin);
    // The second client's FUNCTION LOAD REPLACE put the same code under the same name.
    expect(await libraries(admin)).toHaveLength(1);
  });

  it('with functions: false, loads no library and decides by EVALSHA', async () => {
    const store = new RedisStore(await client(), { keyPrefix: uniquePrefix(), functions: false });
    await admin.config('RESETSTAT');
    for (let i = 1; i <= 20; i++) expect((await store.consume('k', RULE)).remaining).toBe(100 - i);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(await libraries(admin)).toEqual([]);
    expect(commandCalls(await admin.info('commandstats'), 'fcall')).toBe(0);
  });

  it('decides by EVALSHA on a server that refuses FUNCTION, asking once per connection and script', async () => {
    let closeLater: { client: RedisClientLike; close(): Promise<unknown> } | undefined;
    const old = await startRedis({ own: true, args: ['--rename-command', 'FUNCTION', ''] });
    try {
      const oldAdmin = old.client();
      closeLater = await connect(library, old.port);
      const store = new RedisStore(closeLater.client, { keyPrefix: uniquePrefix() });
      await oldAdmin.config('RESETSTAT');
      for (let i = 1; i <= 20; i++) {
        expect((await store.consume('k', RULE)).remaining).toBe(100 - i);
        await new Promise((resolve) => setImmediate(resolve));
      }
      const stats = `${await oldAdmin.info('commandstats')}${await oldAdmin.info('errorstats')}`;
      expect([commandCalls(stats, 'eval'), commandCalls(stats, 'evalsha'), commandCalls(stats, 'fcall')]).toEqual([1, 19, 0]);
      // The one FUNCTION LOAD, refused as an unknown command; nothing else failed.
      expect(stats).toMatch(/^errorstat_ERR:count=1\b/m);
    } finally {
      await closeLater?.close();
      await old.stop();
    }
  });

  it('after a FUNCTION FLUSH, resends the call as EVAL, counts it once, and loads the library again', async () => {
    const store = new RedisStore(await client(), { keyPrefix: uniquePrefix() });
    await store.consume('k', RULE);
    await untilCalledAsFunction(store, admin);
    await admin.call('FUNCTION', 'FLUSH');
    await admin.config('RESETSTAT');
    expect((await store.consume('k', RULE)).remaining).toBe(98);
    const stats = await admin.info('commandstats');
    expect([commandCalls(stats, 'fcall'), commandCalls(stats, 'eval')]).toEqual([1, 1]);
    expect(stats).toMatch(/^cmdstat_fcall:.*failed_calls=1\b/m);
    await untilCalledAsFunction(store, admin);
    expect(await libraries(admin)).toHaveLength(1);
    expect((await store.consume('k', RULE)).remaining).toBe(97);
  });
});
