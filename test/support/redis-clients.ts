import { GlideClient, GlideClusterClient, Logger } from '@valkey/valkey-glide';
import { Redis as IoValkey, Cluster as IoValkeyCluster } from 'iovalkey';
import { createClient as createClient6, createCluster as createCluster6, createSentinel as createSentinel6 } from 'redis';
import { createClient as createClient5, createCluster as createCluster5, createSentinel as createSentinel5 } from 'redis5';
import type { RedisClientLike } from '../../lib/index.js';

/** A client library the store is tested through, besides the ioredis clients the server helpers make. */
export type ClientLibrary = 'node-redis 5' | 'node-redis 6' | 'iovalkey' | 'GLIDE';
export const CLIENT_LIBRARIES: ClientLibrary[] = ['node-redis 5', 'node-redis 6', 'iovalkey', 'GLIDE'];

/** An open client of `library` and how to close it. */
export interface OpenClient {
  client: RedisClientLike;
  close(): Promise<void>;
}

/** A connected client of `library` to the standalone server on `port`. */
export function openClient(library: ClientLibrary, port: number): Promise<OpenClient> {
  return openClientWith(library, port, {});
}

/** Settings a test changes from those `openClient` gives its clients. */
export interface ClientSettings {
  /** GLIDE's `requestTimeout`, in ms. @default 5_000 */
  glideRequestTimeoutMs?: number;
  /** iovalkey's `disconnectTimeout`: how long `disconnect()` waits for its socket to close before destroying it, in ms. @default 2_000 (iovalkey's) */
  iovalkeyDisconnectTimeoutMs?: number;
}

/** `openClient`, with some of its settings changed. */
export async function openClientWith(library: ClientLibrary, port: number, settings: ClientSettings): Promise<OpenClient> {
  if (library === 'GLIDE') {
    // GLIDE logs a WARN line for every error a server replies (the NOSCRIPT the SCRIPT FLUSH tests cause): not in a clean run.
    quietGlideLogs();
    // A request timeout longer than the loaded test machine's worst pause: the tests bound nothing with it.
    const client = await GlideClient.createClient({ addresses: [{ host: '127.0.0.1', port }], requestTimeout: settings.glideRequestTimeoutMs ?? 5_000 });
    return { client, close: async () => client.close() };
  }
  if (library === 'iovalkey') {
    const disconnectTimeout = settings.iovalkeyDisconnectTimeoutMs;
    const client = new IoValkey({ port, host: '127.0.0.1', maxRetriesPerRequest: 0, enableOfflineQueue: false, autoResendUnfulfilledCommands: false, lazyConnect: true, ...(disconnectTimeout === undefined ? {} : { disconnectTimeout }) });
    await client.connect();
    return { client, close: async () => void client.disconnect() };
  }
  const options = { url: `redis://127.0.0.1:${port}`, disableOfflineQueue: true };
  const client = library === 'node-redis 5' ? createClient5(options) : createClient6(options);
  client.on('error', () => undefined);
  await client.connect();
  return { client, close: async () => void client.destroy() };
}

/** A connected Cluster client of `library` on the cluster of these seed nodes. */
export async function openClusterClient(library: ClientLibrary, nodes: { host: string; port: number }[]): Promise<OpenClient> {
  if (library === 'GLIDE') {
    quietGlideLogs();
    const client = await GlideClusterClient.createClient({ addresses: nodes, requestTimeout: 5_000 });
    return { client, close: async () => client.close() };
  }
  if (library === 'iovalkey') {
    const cluster = new IoValkeyCluster(nodes, { enableOfflineQueue: true, lazyConnect: true });
    await cluster.connect();
    return { client: cluster, close: async () => void cluster.disconnect() };
  }
  const options = { rootNodes: nodes.map((n) => ({ socket: { host: n.host, port: n.port } })) };
  const cluster = library === 'node-redis 5' ? createCluster5(options) : createCluster6(options);
  cluster.on('error', () => undefined);
  await cluster.connect();
  return { client: cluster, close: async () => void cluster.destroy() };
}

/**
 * GLIDE logs a WARN line on stdout for every error a server replies and every connection it loses. Tests that
 * provoke those on purpose (a SIGKILL, a SCRIPT FLUSH) call this so that a passing run prints nothing; GLIDE's
 * logger is global to the process, so it stays at ERROR for the test files that run after in the same worker.
 */
export function quietGlideLogs(): void {
  Logger.setLoggerConfig('error');
}

/** A client library with Sentinel support (GLIDE has none). */
export type SentinelLibrary = Exclude<ClientLibrary, 'GLIDE'>;
export const SENTINEL_LIBRARIES: SentinelLibrary[] = ['node-redis 5', 'node-redis 6', 'iovalkey'];

/**
 * A connected client of `library` on the master the Sentinels at `sentinels` name `name`, set as `openClient` sets
 * its library's standalone client: node-redis `createSentinel` (its node clients without an offline queue),
 * iovalkey `new Redis({ sentinels, name })` (no offline queue, no resend, no retry).
 */
export async function openSentinelClient(library: SentinelLibrary, sentinels: { host: string; port: number }[], name: string): Promise<OpenClient> {
  if (library === 'iovalkey') {
    const client = new IoValkey({ sentinels, name, maxRetriesPerRequest: 0, enableOfflineQueue: false, autoResendUnfulfilledCommands: false, lazyConnect: true });
    // Without a listener, iovalkey prints the connection errors of a master the test kills.
    client.on('error', () => undefined);
    await client.connect();
    return { client, close: async () => void client.disconnect() };
  }
  const options = { name, sentinelRootNodes: sentinels, nodeClientOptions: { disableOfflineQueue: true } };
  const sentinel = library === 'node-redis 5' ? createSentinel5(options) : createSentinel6(options);
  sentinel.on('error', () => undefined);
  await sentinel.connect();
  return { client: sentinel, close: async () => void sentinel.destroy() };
}
