import { Redis, type Cluster, type RedisOptions } from 'ioredis';
import { RateLimitConfigError } from '../config/rate-limit-config.error.js';
import type { Clock } from '../interfaces/clock.interface.js';
import type { RateLimitModuleOptions } from '../interfaces/rate-limit-options.interface.js';
import type { RateLimitStore } from '../interfaces/store.interface.js';
import { MemoryStore } from './memory.store.js';
import { RedisStore } from './redis.store.js';

/** A store and, when the module created its client, how to close it. */
export interface StoreHandle {
  readonly store: RateLimitStore;
  /** Closes a client the module created; absent for the memory store and for clients passed in. */
  readonly close?: () => Promise<void>;
}

// Auto-pipelining made our scripts slower in the store benchmark (README, "Benchmarks"), so it stays off.
const CLIENT_DEFAULTS: RedisOptions = { enableAutoPipelining: false };

/** Builds the store the `store` option describes. */
export function createStore(option: RateLimitModuleOptions['store'], keyPrefix: string, clock?: Clock): StoreHandle {
  if (option === undefined || option === 'memory') return { store: new MemoryStore({ keyPrefix, clock }) };
  if (typeof option === 'string') {
    if (!/^rediss?:\/\//i.test(option)) throw new RateLimitConfigError('store', redact(option), '"memory", a redis:// or rediss:// URL, a client or client options');
    return owned(new Redis(option, CLIENT_DEFAULTS), keyPrefix, clock);
  }
  if (option === null || typeof option !== 'object') {
    throw new RateLimitConfigError('store', option, '"memory", a redis:// URL, an ioredis Redis or Cluster, ioredis options, or a RateLimitStore');
  }
  if (isStore(option)) return { store: option };
  if (isClient(option)) return { store: new RedisStore(option, { keyPrefix, clock }) };
  return owned(new Redis({ ...CLIENT_DEFAULTS, ...(option as RedisOptions) }), keyPrefix, clock);
}

function owned(client: Redis, keyPrefix: string, clock?: Clock): StoreHandle {
  return {
    store: new RedisStore(client, { keyPrefix, clock }),
    close: async () => {
      // quit() waits for replies in flight; a client that never connected can only be disconnected.
      await client.quit().catch(() => client.disconnect());
    },
  };
}

function isStore(value: object): value is RateLimitStore {
  const v = value as Partial<RateLimitStore>;
  return typeof v.consume === 'function' && typeof v.consumeAll === 'function' && typeof v.peek === 'function';
}

function isClient(value: object): value is Redis | Cluster {
  const v = value as Partial<Redis>;
  return typeof v.defineCommand === 'function' && typeof v.evalsha === 'function';
}

/**
 * URLs can carry a password; the error message must not. Everything before the last "@" is hidden (whatever
 * the scheme, or a mistyped one, and even a password with "/" in it), and so is a `password=` parameter.
 */
function redact(url: string): string {
  return url.replace(/^([a-z][a-z0-9+.-]*:\/*)?.*@/i, '$1***@').replace(/([?&]password=)[^&]*/gi, '$1***');
}
