import type { Cluster, Redis } from 'ioredis';
import type { NodeRedisClientLike, NodeRedisClusterLike, NodeRedisSentinelLike } from '../../../interfaces/redis-client.interface.js';
import type { GlideClientLike, GlideClusterClientLike } from '../../../interfaces/redis-client.interface.js';
import { GlideAdapter } from './glide.adapter.js';
import { IoRedisAdapter } from './ioredis.adapter.js';
import { NodeRedisAdapter } from './node-redis.adapter.js';
import type { RedisClientPort } from './redis-client.port.js';

/** What `store` accepts as a client, for messages. */
export const SUPPORTED_CLIENTS = 'an ioredis 5/6 or iovalkey Redis or Cluster, a node-redis 5/6 client, cluster or sentinel, a Valkey GLIDE 2 GlideClient or GlideClusterClient';

type Members = Record<string, unknown>;

/**
 * The client `value` is, told by its members (never by its class name: an ioredis client's constructor is named
 * "EventEmitter", a node-redis one's "Class"), wrapped in its library's adapter; undefined when it is none.
 */
export function recognizeClient(value: object): RedisClientPort | undefined {
  const v = value as Members;
  if (isPort(value)) return value;
  if (typeof v.call === 'function' && typeof v.evalsha === 'function' && typeof v.isCluster === 'boolean' && typeof v.status === 'string') {
    return new IoRedisAdapter(value as unknown as Redis | Cluster, ioredisLibrary(v));
  }
  if (typeof v.sendCommand === 'function' && typeof v.isOpen === 'boolean') {
    if (typeof v.getSlotMaster === 'function') return new NodeRedisAdapter(value as unknown as NodeRedisClusterLike, 'cluster');
    if (typeof v.getSentinelNode === 'function') return new NodeRedisAdapter(value as unknown as NodeRedisSentinelLike, 'sentinel');
    // A pool (createClientPool) hands each command to a client of its own: not a connection a script call can follow.
    if (typeof v.execute === 'function' && 'idleClients' in v) return undefined;
    return new NodeRedisAdapter(value as unknown as NodeRedisClientLike, 'client');
  }
  if (typeof v.customCommand === 'function' && typeof v.invokeScript === 'function') {
    // invokeScriptWithRoute exists on the cluster client only.
    if (typeof v.invokeScriptWithRoute === 'function') return new GlideAdapter(value as unknown as GlideClusterClientLike, 'cluster');
    return new GlideAdapter(value as unknown as GlideClientLike, 'client');
  }
  return undefined;
}

/**
 * What `value` looks like, for the refusal of a client the module cannot use: a library it resembles, else its
 * class.
 */
export function describeUnsupported(value: object): string {
  const v = value as Members;
  if (typeof v.sendCommand === 'function' && typeof v.execute === 'function') return 'a node-redis client pool (createClientPool)';
  if (typeof v.sendCommand === 'function' && 'isOpen' in v) return 'a node-redis client of an unsupported version';
  if (typeof v.evalsha === 'function' || typeof v.defineCommand === 'function') return 'an ioredis-like client of an unsupported version';
  const name = (value as { constructor?: { name?: string } }).constructor?.name;
  return name && name !== 'Object' ? `an object of class ${name}` : 'an object';
}

/** ioredis and iovalkey share their API; iovalkey's clients have `clearSocketTimeout`, ioredis's do not. */
function ioredisLibrary(v: Members): 'ioredis' | 'iovalkey' {
  return typeof v.clearSocketTimeout === 'function' ? 'iovalkey' : 'ioredis';
}

function isPort(value: object): value is RedisClientPort {
  const v = value as Members;
  return typeof v.runScript === 'function' && typeof v.nodeOf === 'function' && typeof v.writeCorker === 'function';
}

/** `client` through its adapter, for a store built directly (`new RedisStore(client)`); `what` names the argument. */
export function clientPort(client: object, what: string): RedisClientPort {
  const port = recognizeClient(client);
  if (!port) throw new TypeError(`Invalid ${what}: ${describeUnsupported(client)} (expected ${SUPPORTED_CLIENTS})`);
  return port;
}
