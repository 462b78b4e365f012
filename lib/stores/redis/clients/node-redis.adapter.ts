import type { NodeRedisClientLike, NodeRedisClusterLike, NodeRedisCommandOptions, NodeRedisSentinelLike, RedisArg } from '../../../interfaces/redis-client.interface.js';
import type { LuaScript } from './redis-script.call.js';
import calculateSlot from 'cluster-key-slot';
import { LoadedScripts, sendScript } from './loaded-scripts.js';
import { resendWhileSlotMoves } from './slot-move.resend.js';
import type { ClusterPrimary, RedisClientPort, WriteCorker } from './redis-client.port.js';

/**
 * Every command is sent with the default reply mapping: a client made with `withTypeMapping` (or a client-level
 * `commandOptions.typeMapping`) would otherwise turn the scripts' integers into strings and strings into Buffers.
 */
const RAW: NodeRedisCommandOptions = { typeMapping: {} };
/**
 * RAW with no per-command timer, for a client whose timeout is node-redis's own default (node-redis 6: 5 s; 5 has
 * none): node-redis 6 arms an `AbortSignal.timeout` per command, which cost 15-25 µs of app CPU per command (a PING:
 * 24-34 µs with it, 7-11 µs without), as much as a whole decision. Each script call carries its own deadline
 * (`timeoutMs`) and the failure policy bounds the decision; a timeout the user set is kept.
 */
const RAW_UNTIMED: NodeRedisCommandOptions = { typeMapping: {}, timeout: 0 };
/** node-redis 6's default per-command timeout (ms), which `createClient` and `createCluster` put in `commandOptions`. */
const NODE_REDIS_DEFAULT_TIMEOUT = 5_000;

/** What the adapter reads of a node-redis client beyond its structural type: all three kinds have it. */
interface NodeRedisInternals {
  readonly isOpen: boolean;
  readonly isReady?: boolean;
  options?: { disableOfflineQueue?: boolean; commandOptions?: NodeRedisCommandOptions; keyPrefix?: string; socket?: { host?: string; port?: number; path?: string }; database?: number; url?: string };
  /** The options every command starts from (node-redis 6: the default timeout, then the user's commandOptions; a `withCommandOptions` proxy: its own). */
  readonly _commandOptions?: NodeRedisCommandOptions;
  on?(event: string, listener: (...args: any[]) => void): unknown;
  off?(event: string, listener: (...args: any[]) => void): unknown;
  connect?(): Promise<unknown>;
  close?(): Promise<unknown>;
  destroy?(): unknown;
}

type Kind = 'client' | 'cluster' | 'sentinel';

/**
 * The per-command timeout the user gave the client (`commandOptions.timeout`, or a `withCommandOptions` proxy's), or
 * undefined when only node-redis's own default applies. A proxy's 5,000 ms cannot be told from the default.
 */
function userTimeout(client: NodeRedisInternals): number | undefined {
  const own = client.options?.commandOptions?.timeout;
  if (own !== undefined) return own;
  const effective = client._commandOptions?.timeout;
  return effective === NODE_REDIS_DEFAULT_TIMEOUT ? undefined : effective;
}

/** A node-redis 5/6 cluster's primaries (`masters`) and the client of each (`nodeClient`, connected on first use). */
interface NodeRedisClusterNodes {
  readonly masters: readonly { readonly host: string; readonly port: number }[];
  nodeClient(node: unknown): NodeRedisClientLike | Promise<NodeRedisClientLike>;
}

/**
 * node-redis 5 and 6 (the `redis` package): `createClient()`, `createCluster()` and `createSentinel()`. Commands go
 * through `sendCommand` (node-redis pipelines those of one turn into one write by itself): a script as EVAL the
 * first time it goes to a server (node, on a Cluster), as EVALSHA after, and as EVAL again after a NOSCRIPT; on a
 * Cluster routed by the script's first key, so the resend reaches the same node. A call a Cluster node refused
 * because its slot is moving (TRYAGAIN, which node-redis does not retry, or a redirection past its own budget) is
 * sent again, bounded (slot-move.resend.ts).
 * `sendCommand` does not apply node-redis 6's `keyPrefix`: the adapter puts it before each key, as `eval()` would.
 */
export class NodeRedisAdapter implements RedisClientPort {
  readonly library = 'node-redis';
  readonly isCluster: boolean;
  private readonly prefix: string;
  private readonly loaded = new LoadedScripts();
  private readonly send: (firstKey: string | undefined, args: RedisArg[]) => Promise<unknown>;
  /** What every command is sent with: RAW, untimed unless the user set a timeout (see RAW_UNTIMED). */
  readonly commandOptions: NodeRedisCommandOptions;

  constructor(
    readonly client: NodeRedisClientLike | NodeRedisClusterLike | NodeRedisSentinelLike,
    private readonly kind: Kind,
  ) {
    this.isCluster = kind === 'cluster';
    // A node-redis 6 sentinel keeps its options private: its keyPrefix is read where it keeps it.
    const sentinelPrefix = kind === 'sentinel' ? (client as { _keyPrefix?: unknown })._keyPrefix : undefined;
    this.prefix = this.internals.options?.keyPrefix ?? (typeof sentinelPrefix === 'string' ? sentinelPrefix : '');
    const options = (this.commandOptions = userTimeout(this.internals) === undefined ? RAW_UNTIMED : RAW);
    if (kind === 'cluster') {
      const cluster = client as NodeRedisClusterLike;
      this.send = (firstKey, args) => cluster.sendCommand(firstKey, false, args, options);
    } else if (kind === 'sentinel') {
      const sentinel = client as NodeRedisSentinelLike;
      this.send = (_firstKey, args) => sentinel.sendCommand(false, args, options);
    } else {
      const single = client as NodeRedisClientLike;
      this.send = (_firstKey, args) => single.sendCommand(args, options);
    }
  }

  private get internals(): NodeRedisInternals {
    return this.client as unknown as NodeRedisInternals;
  }

  runScript<Reply>(script: LuaScript, keys: readonly string[], argv: readonly (string | number)[]): Promise<Reply> {
    const args = new Array<string>(3 + keys.length + argv.length);
    args[2] = String(keys.length);
    for (let i = 0; i < keys.length; i++) args[3 + i] = this.prefix + keys[i];
    for (let i = 0; i < argv.length; i++) args[3 + keys.length + i] = String(argv[i]);
    const firstKey = args[3];
    const sent = this.sendScript<Reply>(script, firstKey, args);
    // node-redis follows MOVED and ASK, but not TRYAGAIN (a multi-key call meeting a slot in mid-migration).
    return this.isCluster ? resendWhileSlotMoves(sent, () => this.sendScript<Reply>(script, firstKey, args)) : sent;
  }

  /** `args` (EVAL's after the first two) as FCALL, EVALSHA or EVAL (see sendScript), to the node of `firstKey` on a Cluster. */
  private async sendScript<Reply>(script: LuaScript, firstKey: string | undefined, args: string[]): Promise<Reply> {
    return (await sendScript(this.loaded, this.placeOf(firstKey), script, args, (sent) => this.send(firstKey, sent))) as Reply;
  }

  /** Where a command on `firstKey` runs: its node on a Cluster ('' while the slot table is not loaded), else ''. */
  private placeOf(firstKey: string | undefined): string {
    return this.isCluster && firstKey !== undefined ? (this.nodeOf(calculateSlot(firstKey)) ?? '') : '';
  }

  async time(): Promise<[string, string]> {
    const [seconds, micros] = (await this.send(undefined, ['TIME'])) as [unknown, unknown];
    return [String(seconds), String(micros)];
  }

  del(keys: readonly string[]): Promise<unknown> {
    const prefixed = keys.map((k) => this.prefix + k);
    return this.send(prefixed[0], ['DEL', ...prefixed]);
  }

  xadd(key: string, args: readonly string[]): Promise<unknown> {
    return this.send(this.prefix + key, ['XADD', this.prefix + key, ...args]);
  }

  nodeOf(slot: number): string | undefined {
    if (!this.isCluster) return undefined;
    try {
      const node = (this.client as NodeRedisClusterLike).getSlotMaster(slot);
      return node ? `${node.host}:${node.port}` : undefined;
    } catch {
      // Slots not loaded yet: the call goes alone, routed by the client.
      return undefined;
    }
  }

  writeCorker(): WriteCorker | undefined {
    return undefined;
  }

  /** node-redis writes a turn's commands from a `setImmediate` (a client's, or each Cluster node's, `#scheduleWrite`). */
  readonly writesFromImmediate = true;

  async primaries(): Promise<readonly ClusterPrimary[]> {
    if (!this.isCluster) return [];
    const cluster = this.client as unknown as NodeRedisClusterNodes;
    return Promise.all(
      cluster.masters.map(async (master) => {
        const node = await cluster.nodeClient(master);
        return { address: `${master.host}:${master.port}`, send: (args: readonly string[]) => node.sendCommand([...args], this.commandOptions) };
      }),
    );
  }

  get isOpen(): boolean {
    return this.internals.isOpen;
  }

  get isReady(): boolean {
    return this.internals.isReady ?? this.internals.isOpen;
  }

  /** Connected when made (GLIDE) or refused unless open (node-redis): never on a first command. */
  readonly connectsOnFirstCommand = false;

  on(event: string, listener: (...args: any[]) => void): void {
    this.internals.on?.(event, listener);
  }

  off(event: string, listener: (...args: any[]) => void): void {
    this.internals.off?.(event, listener);
  }

  /**
   * node-redis's `connect()` waits until a connection is up, retrying by its reconnect strategy, for as long as Redis
   * is down: the first failed attempt ends the wait here (the app starts, and the failure policy decides), as ioredis's
   * `connect()` does, and the client goes on reconnecting in the background.
   */
  async connect(): Promise<void> {
    const client = this.internals;
    if (client.isOpen || !client.connect) return;
    const connecting = client.connect();
    // Settled after the wait below may have ended: a client closed while still connecting rejects it.
    connecting.catch(() => undefined);
    await new Promise<void>((resolve, reject) => {
      const failed = (error: Error) => {
        client.off?.('error', failed);
        reject(error);
      };
      client.on?.('error', failed);
      connecting.then(
        () => {
          client.off?.('error', failed);
          resolve();
        },
        failed,
      );
    });
  }

  async close(now = false): Promise<void> {
    if (now) this.internals.destroy?.();
    else await this.internals.close?.();
  }

  unsafeSettings(_timeoutMs?: number): { problems: string[]; risk: string } {
    // node-redis never resends a command in flight (a lost reply rejects), and a per-command timeout does not
    // apply once the command is written: the deadline each script carries is what bounds it.
    if (this.kind === 'sentinel') {
      return {
        problems: ['a node-redis Sentinel holds commands while it fails over, whatever nodeClientOptions.disableOfflineQueue says'],
        risk: 'a command the app gave up on still runs on the new master (recording nothing only when it carries a deadline: not with a custom clock)',
      };
    }
    const problems = this.internals.options?.disableOfflineQueue === true ? [] : ['disableOfflineQueue is not set (commands queue while disconnected, without limit, and run when it reconnects)'];
    return { problems, risk: 'a queued command the app gave up on still runs when the connection returns (recording nothing only when it carries a deadline: not with a custom clock); set disableOfflineQueue: true' };
  }

  describe(): string {
    if (this.kind !== 'client') return this.kind === 'cluster' ? 'a Redis Cluster (node-redis)' : 'a Redis Sentinel master (node-redis)';
    const { socket, database } = this.internals.options ?? {};
    return socket?.path ?? `${socket?.host ?? 'localhost'}:${socket?.port ?? 6379}, database ${database ?? 0}`;
  }
}
