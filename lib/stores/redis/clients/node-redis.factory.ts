import type { NodeRedisClientLike } from '../../../interfaces/redis-client.interface.js';
import type { NodeRedisLibrary } from './client-library.loader.js';
import { NodeRedisAdapter } from './node-redis.adapter.js';

/**
 * The node-redis client the module creates from a redis:// URL (`clientLibrary: 'node-redis'`), with the settings
 * that keep a decision within `timeoutMs` and nothing counted the app did not wait for: no offline queue (a command
 * fails at once while disconnected, rather than running when the connection is back), a connect timeout, and
 * reconnection in the background. node-redis never resends a command in flight. Connected at bootstrap.
 */
export function createNodeRedis({ createClient }: NodeRedisLibrary, url: string, timeoutMs: number): NodeRedisAdapter {
  const client = createClient({
    url,
    disableOfflineQueue: true,
    socket: {
      connectTimeout: Math.max(1_000, timeoutMs * 10),
      // Reconnecting to a local or nearby server is cheap, and every second away is a second of degraded decisions.
      reconnectStrategy: (retries: number) => Math.min(retries * 50, 500),
    },
  });
  return new NodeRedisAdapter(client as NodeRedisClientLike, 'client');
}
