import { Logger } from '@nestjs/common';
import { RateLimitConfigError } from '../rules/rate-limit-config.error.js';
import type { RateLimitSettings } from '../interfaces/rate-limit-settings.interface.js';
import type { RateLimitClusterOptions, RateLimitModuleOptions } from '../interfaces/rate-limit-options.interface.js';
import type { RateLimitStore } from '../interfaces/store.interface.js';
import { MemoryStore } from '../stores/memory/memory.store.js';
import { RedisConnectionErrors } from '../stores/redis/redis-connection.errors.js';
import { RedisStore } from '../stores/redis/redis.store.js';
import { describeUnsupported, recognizeClient, SUPPORTED_CLIENTS } from '../stores/redis/clients/client.recognizer.js';
import { IoRedisAdapter } from '../stores/redis/clients/ioredis.adapter.js';
import { createIoRedis, createIoRedisCluster } from '../stores/redis/clients/ioredis.factory.js';
import { CREATABLE_LIBRARIES, LIBRARY_PACKAGE, loadLibrary, type CreatableLibrary, type IoRedisLibrary, type NodeRedisLibrary } from '../stores/redis/clients/client-library.loader.js';
import { createNodeRedis } from '../stores/redis/clients/node-redis.factory.js';
import type { RedisOptions } from '../interfaces/ioredis-options.interface.js';
import type { RedisClientPort } from '../stores/redis/clients/redis-client.port.js';

/** A store and what the module must do with the client it talks to. */
export interface StoreHandle {
  /** The store the failure policy wraps (Redis), or the memory store. */
  readonly store: RateLimitStore;
  /** The Redis or Cluster client behind `store`, created by the module or passed in, through its adapter. */
  readonly client?: RedisClientPort;
  /** Whether the module created `client` (and so connects and closes it). */
  readonly owned: boolean;
  /** What the client the module created reported, for messages that would otherwise say "Connection is closed". */
  readonly connectionErrors?: RedisConnectionErrors;
  /** Which store is in use, for the start-up log: "memory", a URL without its password, ... */
  readonly description: string;
}

/** Builds the store the `store` option describes; a client it creates is of `settings.clientLibrary`, or of the first library installed. */
export async function createStore(option: RateLimitModuleOptions['store'], settings: RateLimitSettings): Promise<StoreHandle> {
  const { keyPrefix, clock, timeoutMs, coalesce, functions } = settings;
  const redisStore = (client: RedisClientPort, owned: boolean, description: string): StoreHandle => ({
    // The client itself, not its adapter: `RedisStore.client` is the app's client, as before.
    store: new RedisStore(client.client, { keyPrefix, clock, timeoutMs, coalesce, functions }),
    client,
    owned,
    connectionErrors: owned ? new RedisConnectionErrors(client) : undefined,
    description,
  });
  // An empty string is how an unset variable arrives (`REDIS_URL=` in .env, `config.get('REDIS_URL') ?? ...`).
  if (option === undefined || option === 'memory' || (typeof option === 'string' && option.trim() === '')) {
    return { store: new MemoryStore({ keyPrefix, clock }), owned: false, description: 'memory (this process only)' };
  }
  if (typeof option === 'string') {
    if (!/^rediss?:\/\//i.test(option)) throw new RateLimitConfigError('store', redact(option), '"memory", a redis:// or rediss:// URL, a client or client options');
    checkUrlDatabase(option);
    const { library, module } = await libraryToCreate(settings.clientLibrary, 'a redis:// URL');
    const client = library === 'node-redis' ? createNodeRedis(module as NodeRedisLibrary, option, timeoutMs) : new IoRedisAdapter(createIoRedis(module as IoRedisLibrary, option, timeoutMs), library, module as IoRedisLibrary);
    return redisStore(client, true, `Redis at ${redact(option)} (${library})`);
  }
  if (option === null || typeof option !== 'object') {
    throw new RateLimitConfigError('store', option, '"memory", a redis:// URL, an ioredis Redis or Cluster, ioredis options, { cluster: nodes }, or a RateLimitStore');
  }
  if (isStore(option)) return { store: option, owned: false, description: `a custom store (${option.constructor?.name ?? 'object'})` };
  const adapter = recognizeClient(option);
  if (adapter) {
    warnAboutUnsafeSettings(adapter, timeoutMs);
    return redisStore(adapter, false, `the ${adapter.library} ${adapter.isCluster ? 'Cluster client' : 'client'} passed in (${adapter.describe()})`);
  }
  // A client of no supported library (or version), or an instance of some class: never taken for options.
  if (!isPlainObject(option)) throw new RateLimitConfigError('store', describeUnsupported(option), `${SUPPORTED_CLIENTS}; a RateLimitStore; ioredis options; { cluster: nodes }; a redis:// URL or "memory"`);
  if ('url' in option) throw new RateLimitConfigError('store.url', redact(String(option.url)), 'the URL given as "store" itself, e.g. store: "redis://host:6379"');
  const { library, module } = await libraryToCreate(settings.clientLibrary, 'ioredis options', ['ioredis', 'iovalkey']);
  const ioredis = module as IoRedisLibrary;
  if ('cluster' in option) {
    const seeds = (option as RateLimitClusterOptions).cluster;
    return redisStore(new IoRedisAdapter(createIoRedisCluster(ioredis, option as RateLimitClusterOptions, timeoutMs), library as 'ioredis' | 'iovalkey', ioredis), true, `a Redis Cluster (${Array.isArray(seeds) ? seeds.length : 0} seed nodes, ${library})`);
  }
  const db = (option as RedisOptions).db;
  if (db !== undefined && (!Number.isSafeInteger(db) || db < 0)) throw new RateLimitConfigError('store.db', db, 'a database number: an integer of 0 or more');
  const { host = '127.0.0.1', port = 6379, path } = option as RedisOptions;
  return redisStore(new IoRedisAdapter(createIoRedis(ioredis, option as RedisOptions, timeoutMs), library as 'ioredis' | 'iovalkey', ioredis), true, `Redis at ${path ?? `${host}:${port}`} (${library})`);
}

/**
 * The library the module creates a client of: `clientLibrary` if set (refused if not installed, or if it cannot take
 * `what`), else the first of `CREATABLE_LIBRARIES` installed among those that can.
 */
async function libraryToCreate(
  requested: CreatableLibrary | undefined,
  what: string,
  able: readonly CreatableLibrary[] = CREATABLE_LIBRARIES,
): Promise<{ library: CreatableLibrary; module: IoRedisLibrary | NodeRedisLibrary }> {
  if (requested !== undefined) {
    if (!able.includes(requested)) {
      throw new RateLimitConfigError('store', what, `a redis:// URL with clientLibrary "${requested}" (${what} are for ${able.join(' or ')}), or a ${requested} client of your own passed as "store"`);
    }
    const module = await loadLibrary(requested);
    if (!module) throw new RateLimitConfigError('clientLibrary', requested, `an installed library: npm install ${LIBRARY_PACKAGE[requested]}`);
    return { library: requested, module };
  }
  for (const library of able) {
    const module = await loadLibrary(library);
    if (module) return { library, module };
  }
  throw new RateLimitConfigError(
    'store',
    what,
    `a client library installed to create a client from it (looked for ${able.map((l) => LIBRARY_PACKAGE[l]).join(', ')}: npm install one), or a client of your own passed as "store" (a Valkey GLIDE client, for one)`,
  );
}

/** The settings of a client passed in that let a command run after the app gave up on it, or twice: said once, at start-up. */
function warnAboutUnsafeSettings(port: RedisClientPort, timeoutMs: number): void {
  const { problems, risk } = port.unsafeSettings(timeoutMs);
  if (problems.length === 0) return;
  new Logger('RateLimit').warn(
    `The ${port.library} client passed as "store" has ${problems.join('; ')}. Decisions still give up after ${timeoutMs} ms and the scripts ignore commands past their deadline, but ${risk}.`,
  );
}

/** An object literal (or one without a prototype): options, never an instance of some class. */
function isPlainObject(value: object): boolean {
  const proto = Object.getPrototypeOf(value) as object | null;
  // By shape, not identity: options made in another realm (a vm context, a worker's structured clone) count too.
  return proto === null || (Object.getPrototypeOf(proto) === null && (proto as { constructor?: { name?: string } }).constructor?.name === 'Object');
}

function isStore(value: object): value is RateLimitStore {
  const v = value as Partial<RateLimitStore>;
  return typeof v.consume === 'function' && typeof v.consumeAll === 'function' && typeof v.peek === 'function';
}

/**
 * ioredis takes the URL's path as the database number and sends `SELECT` with whatever it makes of it: for
 * `redis://host/abc`, `SELECT NaN`, whose error nothing can catch and which ends the process after start-up.
 */
function checkUrlDatabase(url: string): void {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new RateLimitConfigError('store', redact(url), 'a valid redis:// or rediss:// URL');
  }
  const db = parsed.pathname.length > 1 ? parsed.pathname.slice(1) : parsed.searchParams.get('db');
  if (db !== null && !/^\d+$/.test(db)) {
    throw new RateLimitConfigError('store', redact(url), 'a redis:// URL whose path, if any, is a database number: redis://host:6379/0');
  }
}

/**
 * URLs can carry a password; the error message must not. Everything before the last "@" is hidden (whatever
 * the scheme, or a mistyped one, and even a password with "/" in it), and so is a `password=` parameter.
 */
function redact(url: string): string {
  return url.replace(/^([a-z][a-z0-9+.-]*:\/*)?.*@/i, '$1***@').replace(/([?&]password=)[^&]*/gi, '$1***');
}
