import { GlideClient, GlideClusterClient } from '@valkey/valkey-glide';
import { Redis as IoValkey, Cluster as IoValkeyCluster } from 'iovalkey';
import { createClient as createClient6, createCluster as createCluster6 } from 'redis';
import { createClient as createClient5, createCluster as createCluster5 } from 'redis5';
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
export async function openClient(library: ClientLibrary, port: number): Promise<OpenClient> {
  if (library === 'GLIDE') {
    // A request timeout longer than the loaded test machine's worst pause: the tests bound nothing with it.
    const client = await GlideClient.createClient({ addresses: [{ host: '127.0.0.1', port }], requestTimeout: 5_000 });
    return { client, close: async () => client.close() };
  }
  if (library === 'iovalkey') {
    const client = new IoValkey({ port, host: '127.0.0.1', maxRetriesPerRequest: 0, enableOfflineQueue: false, autoResendUnfulfilledCommands: false, lazyConnect: true });
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
