import { Logger } from '@nestjs/common';
import { Cluster, Redis, type ClusterNode, type ClusterOptions, type RedisOptions } from 'ioredis';
import { RateLimitConfigError } from '../config/rate-limit-config.error.js';
import type { RateLimitSettings } from '../config/module-options.validator.js';
import type { RateLimitClusterOptions, RateLimitModuleOptions } from '../interfaces/rate-limit-options.interface.js';
import type { RateLimitStore } from '../interfaces/store.interface.js';
import { MemoryStore } from './memory.store.js';
import { RedisConnectionErrors } from './redis-connection.errors.js';
import { RedisStore } from './redis.store.js';

/** A store and what the module must do with the client it talks to. */
export interface StoreHandle {
  /** The store the failure policy wraps (Redis), or the memory store. */
  readonly store: RateLimitStore;
  /** The Redis or Cluster client behind `store`, created by the module or passed in. */
  readonly client?: Redis | Cluster;
  /** Whether the module created `client` (and so connects and closes it). */
  readonly owned: boolean;
  /** What the client the module created reported, for messages that would otherwise say "Connection is closed". */
  readonly connectionErrors?: RedisConnectionErrors;
  /** Which store is in use, for the start-up log: "memory", a URL without its password, ... */
  readonly description: string;
}

/**
 * Settings of the clients the module creates, so that a decision never waits past `timeoutMs` and nothing is
 * counted that the app did not wait for: no offline queue (fail at once while disconnected), no retry or resend
 * of commands in flight after a reconnect (they may have run), a command timeout, and reconnection in the
 * background. Auto-pipelining made our scripts slower in the store benchmark, so it stays off.
 *
 * The decision's own bound is `timeoutMs`, kept by the ResilientStore; the command timeout is only a backstop
 * (commands outside a decision, a silent network partition). Were it `timeoutMs` too, a reply Redis sent in
 * time but that the app read late (its event loop blocked past `timeoutMs`) would be dropped by ioredis: the
 * failure policy would decide a request Redis had already counted.
 */
export function safeClientOptions(timeoutMs: number): RedisOptions {
  return {
    enableAutoPipelining: false,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    autoResendUnfulfilledCommands: false,
    commandTimeout: Math.max(1_000, timeoutMs * 10),
    connectTimeout: Math.max(1_000, timeoutMs * 10),
    // A socket left to close on its own would hold the process for ioredis's default 2 s after app.close().
    disconnectTimeout: 200,
    // Reconnecting to a local or nearby server is cheap, and every second away is a second of degraded decisions.
    retryStrategy: (attempt) => Math.min(attempt * 50, 500),
    // Connected at bootstrap: a start-up that fails earlier leaves no socket behind.
    lazyConnect: true,
  };
}

/** Builds the store the `store` option describes. */
export function createStore(option: RateLimitModuleOptions['store'], settings: RateLimitSettings): StoreHandle {
  const { keyPrefix, clock, timeoutMs, coalesce } = settings;
  const redisStore = (client: Redis | Cluster, owned: boolean, description: string): StoreHandle => ({
    store: new RedisStore(client, { keyPrefix, clock, timeoutMs, coalesce }),
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
    return redisStore(new Redis(option, safeClientOptions(timeoutMs)), true, `Redis at ${redact(option)}`);
  }
  if (option === null || typeof option !== 'object') {
    throw new RateLimitConfigError('store', option, '"memory", a redis:// URL, an ioredis Redis or Cluster, ioredis options, { cluster: nodes }, or a RateLimitStore');
  }
  if (isStore(option)) return { store: option, owned: false, description: `a custom store (${option.constructor?.name ?? 'object'})` };
  if (isClient(option)) {
    warnAboutUnsafeSettings(option, timeoutMs);
    return redisStore(option, false, option.isCluster ? 'the Redis Cluster client passed in' : 'the Redis client passed in');
  }
  if ('url' in option) throw new RateLimitConfigError('store.url', redact(String(option.url)), 'the URL given as "store" itself, e.g. store: "redis://host:6379"');
  if ('cluster' in option) {
    const seeds = (option as RateLimitClusterOptions).cluster;
    return redisStore(createCluster(option as RateLimitClusterOptions, timeoutMs), true, `a Redis Cluster (${Array.isArray(seeds) ? seeds.length : 0} seed nodes)`);
  }
  const db = (option as RedisOptions).db;
  if (db !== undefined && (!Number.isSafeInteger(db) || db < 0)) throw new RateLimitConfigError('store.db', db, 'a database number: an integer of 0 or more');
  const { host = '127.0.0.1', port = 6379, path } = option as RedisOptions;
  return redisStore(new Redis({ ...(option as RedisOptions), ...safeClientOptions(timeoutMs) }), true, `Redis at ${path ?? `${host}:${port}`}`);
}

function createCluster({ cluster, options = {} }: RateLimitClusterOptions, timeoutMs: number): Cluster {
  if (!Array.isArray(cluster) || cluster.length === 0) throw new RateLimitConfigError('store.cluster', cluster, 'a non-empty array of seed nodes');
  const { lazyConnect: _lazy, enableAutoPipelining, ...nodeOptions } = safeClientOptions(timeoutMs);
  // Queueing, pipelining and laziness are the Cluster's own options; the per-node connections get the rest.
  const clusterOptions: ClusterOptions = {
    ...options,
    enableOfflineQueue: false,
    enableAutoPipelining,
    lazyConnect: true,
    retryDelayOnTryAgain: options.retryDelayOnTryAgain ?? 20,
    redisOptions: { ...options.redisOptions, ...nodeOptions },
  };
  return new RateLimitCluster(cluster, clusterOptions, nodeOptions.connectTimeout ?? 1_000);
}

/**
 * The Cluster the module creates. ioredis opens a node's connection on its first command, and without an offline
 * queue a command that finds that connection still opening is put off by `retryDelayOnFailover` (100 ms): longer
 * than a decision may take, so the first decisions on each master after start-up (or after a new master appears)
 * were left to the failure policy. So `connect()`, once the Cluster is ready, also opens a connection to every
 * master and waits for them (bounded), and a master the slot table names later is connected at once.
 */
class RateLimitCluster extends Cluster {
  constructor(
    nodes: ClusterNode[],
    options: ClusterOptions,
    private readonly nodeConnectTimeoutMs: number,
  ) {
    // Typed as ioredis's default Cluster (legacy reply mapping), as `new Cluster(...)` was before.
    super(nodes, options as ClusterOptions & { redisOptions?: { replyMapping?: 'legacy' } });
    // Not while connecting: the ready check's CLUSTER INFO, sent to a node whose connection is opening, would fail.
    this.on('refresh', () => {
      if (this.status === 'ready') void this.connectMasters();
    });
  }

  override async connect(): Promise<void> {
    await super.connect();
    await this.connectMasters();
  }

  /** Resolves once every master's connection is ready, has failed, or `nodeConnectTimeoutMs` has passed; never rejects. */
  private connectMasters(): Promise<void> {
    return Promise.all(this.nodes('master').map((node) => nodeReady(node, this.nodeConnectTimeoutMs))).then(() => undefined);
  }
}

// One wait per node at a time: 'refresh' fires again and again while a master fails over, and each wait used to
// put three more listeners on a node that was not ready yet.
const waiting = new WeakMap<Redis, Promise<void>>();

function nodeReady(node: Redis, timeoutMs: number): Promise<void> {
  if (node.status === 'ready') return Promise.resolve();
  let wait = waiting.get(node);
  if (!wait) {
    wait = waitForNode(node, timeoutMs).finally(() => waiting.delete(node));
    waiting.set(node, wait);
  }
  return wait;
}

function waitForNode(node: Redis, timeoutMs: number): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      for (const event of ['ready', 'close', 'end']) node.off(event, done);
      resolve();
    };
    const timer = setTimeout(done, timeoutMs);
    for (const event of ['ready', 'close', 'end']) node.once(event, done);
    if (node.status === 'wait') node.connect().catch(() => undefined);
  });
}

/**
 * A client passed in keeps its settings; ours bound the wait anyway, but these let a command run after the
 * app gave up, or twice. Said once, at start-up.
 */
function warnAboutUnsafeSettings(client: Redis | Cluster, timeoutMs: number): void {
  const options: RedisOptions = (client.isCluster ? (client as Cluster).options.redisOptions : (client as Redis).options) ?? {};
  const offlineQueue = client.isCluster ? (client as Cluster).options.enableOfflineQueue : (client as Redis).options.enableOfflineQueue;
  const problems: string[] = [];
  if (offlineQueue !== false) problems.push('enableOfflineQueue is on (commands wait while disconnected)');
  if (options.autoResendUnfulfilledCommands !== false) problems.push('autoResendUnfulfilledCommands is on (commands in flight are sent again after a reconnect)');
  if (options.maxRetriesPerRequest !== 0) problems.push(`maxRetriesPerRequest is ${String(options.maxRetriesPerRequest ?? 20)} (not 0)`);
  if (problems.length > 0) {
    new Logger('RateLimit').warn(
      `The Redis client passed as "store" has ${problems.join('; ')}. Decisions still give up after ${timeoutMs} ms and the scripts ignore commands past their deadline, but a resent command can count twice; see safeClientOptions().`,
    );
  }
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
