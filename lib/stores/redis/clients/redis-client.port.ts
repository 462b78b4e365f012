import type { RedisClientLike } from '../../../interfaces/redis-client.interface.js';
import type { LuaScript } from './redis-script.call.js';

/** What a Redis client is asked before each script call when coalescing is off (ioredis corks its socket). */
export interface WriteCorker {
  cork(): void;
}

/** A primary node of a Redis Cluster, reached directly, whatever slots it serves. */
export interface ClusterPrimary {
  /** `host:port`, for messages. */
  readonly address: string;
  /** Sends one command to this node, its arguments as given (no key prefix added); the reply with strings as strings. */
  send(args: readonly string[]): Promise<unknown>;
}

/**
 * The few operations the Redis store, the lease store, the clock and the audit trail need from a Redis client,
 * whatever its library. One adapter per library implements it (the files beside this one); nothing else in `lib/`
 * imports a client library. Deadlines, coalescing, the reply codec, Cluster batching per node and SCRIPT FLUSH
 * recovery live above it, in RedisStore, the same for every client.
 */
export interface RedisClientPort {
  /** The client of the library, as the app made it. */
  readonly client: RedisClientLike;
  /** The client's library, for messages: "ioredis", "iovalkey", "node-redis", "GLIDE". */
  readonly library: string;
  /** Whether the client is a Cluster client (keys of one script call must then share a slot). */
  readonly isCluster: boolean;
  /**
   * Runs `script` by its SHA-1 with `keys` and `argv`. A server that lost the script replies NOSCRIPT without
   * running it; the adapter then sends its source (EVAL), which cannot count anything twice. Integers come back as
   * numbers, nested in arrays, whatever reply mapping the client is set to. The client's own key prefix, if it has
   * one, is put before each key.
   */
  runScript<Reply>(script: LuaScript, keys: readonly string[], argv: readonly (string | number)[]): Promise<Reply>;
  /** Redis's TIME: seconds and microseconds, as strings. */
  time(): Promise<[string, string]>;
  /** DEL of keys of one slot. */
  del(keys: readonly string[]): Promise<unknown>;
  /** XADD `key` with the rest of the command (`MAXLEN ~ n * field value ...`). */
  xadd(key: string, args: readonly string[]): Promise<unknown>;
  /** On a Cluster, an id of the node serving `slot` (by the client's slot table); undefined when unknown or standalone. */
  nodeOf(slot: number): string | undefined;
  /** A corker for the calls of one turn, when the client can put them in one write; undefined otherwise. */
  writeCorker(): WriteCorker | undefined;
  /**
   * Whether the client writes the commands it is given from a `setImmediate` of its own (node-redis), not at once:
   * the batch of calls made after a lone call in the same turn then goes in the lone call's write only when the
   * batch's flush was scheduled before the lone call was sent (see RedisCallBatcher). Absent: false.
   */
  readonly writesFromImmediate?: boolean;
  /**
   * The most calls a coalesced script call decides when the app sets no `coalesce.maxBatch`, for a client whose own
   * cost per command makes larger batches pay (GLIDE). Absent: DEFAULT_MAX_BATCH.
   */
  readonly preferredMaxBatch?: number;
  /** Whether commands can be sent: false for a client that was never opened, or was closed. */
  readonly isOpen: boolean;
  /**
   * On a Cluster, each primary node the client knows now, for what must visit every node (the testing kit's SCAN);
   * empty on a standalone client. Absent from a port that cannot reach the nodes one by one.
   */
  primaries?(): Promise<readonly ClusterPrimary[]>;
  /** Whether the connection is ready now. */
  readonly isReady: boolean;
  /** Whether the client has not connected yet and would connect on its first command (ioredis's `lazyConnect`). */
  readonly connectsOnFirstCommand: boolean;
  /** Listens to the client's events ('ready', 'error', ...); a client without events ignores it. */
  on(event: string, listener: (...args: any[]) => void): void;
  off(event: string, listener: (...args: any[]) => void): void;
  /** Opens the connection of a client the module created. */
  connect(): Promise<void>;
  /** Closes a client the module created: waits for replies in flight, or drops the connection at once with `now`. */
  close(now?: boolean): Promise<void>;
  /**
   * The client's own settings that let a command run after the app gave up on it, or twice (each named with its
   * value), and what that risks, for decisions bounded by `timeoutMs`; said once at start-up for a client passed in.
   */
  unsafeSettings(timeoutMs: number): { problems: string[]; risk: string };
  /** Where the client connects, for messages: host, port and database, never a password. */
  describe(): string;
}
