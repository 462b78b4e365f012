/**
 * The Redis clients `store` accepts, described by the few members the module uses, so that a client of any
 * supported library and major type-checks as `store` with no cast, and no client library is imported here.
 * Each is told apart at run time by its members (stores/redis/clients/client.recognizer.ts).
 */

/** A command argument as the clients take it. */
export type RedisArg = string | Buffer;

/** ioredis 5 and 6, and iovalkey: a `Redis` (standalone, or Sentinel through the client). */
export interface IoRedisClientLike {
  readonly isCluster: boolean;
  status: string;
  call(command: string, ...args: (string | number | Buffer)[]): Promise<unknown>;
  evalsha(sha1: string | Buffer, numkeys: number | string, ...args: (string | Buffer | number)[]): Promise<unknown>;
  on(event: string, listener: (...args: any[]) => void): unknown;
}

/** ioredis 5 and 6, and iovalkey: a `Cluster`. */
export interface IoRedisClusterLike extends IoRedisClientLike {
  slots: string[][];
  nodes(role?: 'all' | 'master' | 'slave'): IoRedisClientLike[];
}

/** Per-command options of node-redis's `sendCommand`. */
export interface NodeRedisCommandOptions {
  timeout?: number;
  abortSignal?: AbortSignal;
  typeMapping?: Record<number, unknown>;
}

/** node-redis 5 and 6 (`redis`): `createClient()`. */
export interface NodeRedisClientLike {
  readonly isOpen: boolean;
  readonly isReady: boolean;
  sendCommand(args: ReadonlyArray<RedisArg>, options?: NodeRedisCommandOptions): Promise<unknown>;
}

/** node-redis 5 and 6 (`redis`): `createCluster()`. */
export interface NodeRedisClusterLike {
  readonly isOpen: boolean;
  sendCommand(firstKey: RedisArg | undefined, isReadonly: boolean | undefined, args: ReadonlyArray<RedisArg>, options?: NodeRedisCommandOptions): Promise<unknown>;
  getSlotMaster(slot: number): { host: string; port: number; id: string };
}

/** node-redis 5 and 6 (`redis`): `createSentinel()`. */
export interface NodeRedisSentinelLike {
  readonly isOpen: boolean;
  readonly isReady: boolean;
  sendCommand(isReadonly: boolean | undefined, args: ReadonlyArray<RedisArg>, options?: NodeRedisCommandOptions): Promise<unknown>;
}



/** A route of a Valkey GLIDE cluster command (only the ones the module uses). */
export type GlideRoute = { type: 'primarySlotKey'; key: string } | { type: 'routeByAddress'; host: string; port?: number } | 'randomNode' | 'allPrimaries';

/** Valkey GLIDE (`@valkey/valkey-glide`): a `GlideClient`. */
export interface GlideClientLike {
  customCommand(args: RedisArg[], options?: { decoder?: number }): Promise<unknown>;
  close(errorMessage?: string): void;
}

/** Valkey GLIDE (`@valkey/valkey-glide`): a `GlideClusterClient`. */
export interface GlideClusterClientLike {
  customCommand(args: RedisArg[], options?: { route?: GlideRoute; decoder?: number }): Promise<unknown>;
  close(errorMessage?: string): void;
}

/** A client of a supported library, as the user made it (see the README's "Redis clients" table). */
export type RedisClientLike =
  | IoRedisClientLike
  | IoRedisClusterLike
  | NodeRedisClientLike
  | NodeRedisClusterLike
  | NodeRedisSentinelLike
  | GlideClientLike
  | GlideClusterClientLike;

/** A client library the module can create a client of, from a URL or options (`clientLibrary`). */
export type CreatableClientLibrary = 'ioredis' | 'iovalkey' | 'node-redis';
