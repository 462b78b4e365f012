import type { Cluster, ClusterNode, ClusterOptions, Redis, RedisOptions } from 'ioredis';
import type { IoRedisLibrary } from './client-library.loader.js';
import { RateLimitConfigError } from '../../../rules/rate-limit-config.error.js';
import type { RateLimitClusterOptions } from '../../../interfaces/rate-limit-options.interface.js';

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

/** The ioredis (or iovalkey) client the module creates from a redis:// URL or ioredis options, with the safe settings. */
export function createIoRedis({ Redis }: IoRedisLibrary, target: string | RedisOptions, timeoutMs: number): Redis {
  return typeof target === 'string' ? new Redis(target, safeClientOptions(timeoutMs)) : new Redis({ ...target, ...safeClientOptions(timeoutMs) });
}

export function createIoRedisCluster(library: IoRedisLibrary, { cluster, options = {} }: RateLimitClusterOptions, timeoutMs: number): Cluster {
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
  return new (rateLimitClusterOf(library))(cluster, clusterOptions, nodeOptions.connectTimeout ?? 1_000);
}

/**
 * The Cluster the module creates. ioredis opens a node's connection on its first command, and without an offline
 * queue a command that finds that connection still opening is put off by `retryDelayOnFailover` (100 ms): longer
 * than a decision may take, so the first decisions on each master after start-up (or after a new master appears)
 * were left to the failure policy. So `connect()`, once the Cluster is ready, also opens a connection to every
 * master and waits for them (bounded), and a master the slot table names later is connected at once.
 */
function defineRateLimitCluster(Cluster: IoRedisLibrary['Cluster']) {
  return class RateLimitCluster extends Cluster {
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
  };
}

const CLUSTERS = new WeakMap<IoRedisLibrary['Cluster'], ReturnType<typeof defineRateLimitCluster>>();

/** The RateLimitCluster class of a library (ioredis or iovalkey), made once. */
function rateLimitClusterOf({ Cluster }: IoRedisLibrary): ReturnType<typeof defineRateLimitCluster> {
  let made = CLUSTERS.get(Cluster);
  if (!made) CLUSTERS.set(Cluster, (made = defineRateLimitCluster(Cluster)));
  return made;
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

/** The settings of an ioredis or iovalkey client passed in that let a command run after the app gave up on it, or twice. */
export function unsafeIoRedisSettings(client: Redis | Cluster): string[] {
  const options: RedisOptions = (client.isCluster ? (client as Cluster).options.redisOptions : (client as Redis).options) ?? {};
  const offlineQueue = client.isCluster ? (client as Cluster).options.enableOfflineQueue : (client as Redis).options.enableOfflineQueue;
  const problems: string[] = [];
  if (offlineQueue !== false) problems.push('enableOfflineQueue is on (commands wait while disconnected)');
  if (options.autoResendUnfulfilledCommands !== false) problems.push('autoResendUnfulfilledCommands is on (commands in flight are sent again after a reconnect)');
  if (options.maxRetriesPerRequest !== 0) problems.push(`maxRetriesPerRequest is ${String(options.maxRetriesPerRequest ?? 20)} (not 0)`);
  return problems;
}
