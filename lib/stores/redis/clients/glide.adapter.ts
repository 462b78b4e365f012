import type { GlideClientLike, GlideClusterClientLike, GlideRoute, RedisArg } from '../../../interfaces/redis-client.interface.js';
import type { LuaScript } from './redis-script.call.js';
import calculateSlot from 'cluster-key-slot';
import { LoadedScripts, sendScript, type FunctionPlaces } from './loaded-scripts.js';
import { resendWhileSlotMoves } from './slot-move.resend.js';
import type { ClusterPrimary, RedisClientPort, WriteCorker } from './redis-client.port.js';

/** GLIDE's `Decoder.String` (its enum's value): replies as strings whatever `defaultDecoder` the client has. */
const DECODE_STRINGS = 1;

/** GLIDE's request timeout when the client sets none, in ms. */
export const GLIDE_DEFAULT_REQUEST_TIMEOUT_MS = 250;

/** What the adapter reads of a GLIDE client beyond its structural type (TS-private fields, there at run time). */
interface GlideInternals {
  isClosed?: boolean;
  requestTimeout?: number;
}

/** What the adapter uses of GLIDE's `ClusterBatch`. */
interface GlideBatch {
  customCommand(args: RedisArg[]): unknown;
}
type GlideBatchClass = new (isAtomic: boolean) => GlideBatch;

/** A GLIDE cluster client's `exec`, which the structural type leaves out. */
interface GlideBatchRunner {
  exec(batch: GlideBatch, raiseOnError: boolean, options: { route: GlideRoute; decoder: number }): Promise<unknown[] | null>;
}

let clusterBatch: Promise<GlideBatchClass | undefined> | undefined;
let loadedBatch: GlideBatchClass | undefined;

/**
 * GLIDE's `ClusterBatch`, loaded once, when a Cluster adapter is made: GLIDE is an optional peer, there when a GLIDE
 * client was passed. Undefined if it cannot be loaded (script calls then go through `customCommand`).
 */
function loadClusterBatch(): Promise<GlideBatchClass | undefined> {
  clusterBatch ??= import('@valkey/valkey-glide').then(
    (module) => {
      const found = module as { ClusterBatch?: GlideBatchClass; default?: { ClusterBatch?: GlideBatchClass } };
      loadedBatch = found.ClusterBatch ?? found.default?.ClusterBatch;
      return loadedBatch;
    },
    () => undefined,
  );
  return clusterBatch;
}

/**
 * Valkey GLIDE (`@valkey/valkey-glide`): `GlideClient` and `GlideClusterClient`, through `customCommand` (and `exec`
 * for a script call on a Cluster, below). A script goes as EVAL the first time this adapter sends it to the server
 * (on a Cluster, to a slot: GLIDE shows no slot table), as EVALSHA after, and as EVAL again after a NOSCRIPT (GLIDE
 * words it "NoScriptError"): the first decisions need no NOSCRIPT round trip, which GLIDE would also log as a WARN.
 * Once its function library is loaded (on a Cluster, on every primary at once), as FCALL (see sendScript).
 * On a Cluster each command is routed to the primary of its first key's slot (`primarySlotKey`; `primarySlotId`
 * routes to the wrong node in GLIDE 2.5). GLIDE exposes no slot table, so `nodeOf` knows no node: a coalesced
 * batch is sent one call per script call, each routed by its key.
 * On a Cluster a script call goes as a pipeline of one command (`ClusterBatch`, not atomic), which GLIDE sends with
 * the ASKING before it when it follows an ASK (a lone command, among many, can reach the slot's new owner without
 * it, and fail with a MOVED back to the old owner), and does not retry on TRYAGAIN (where a lone command waits
 * out GLIDE's backoff, over a second). A call a node refused because its slot is moving (TRYAGAIN, MOVED, ASK: it
 * ran nowhere) is sent again, paced and bounded (slot-move.resend.ts).
 */
export class GlideAdapter implements RedisClientPort {
  readonly library = 'GLIDE';
  readonly isCluster: boolean;
  /** Each command costs GLIDE a protobuf message and a write to its core, and each argument a Buffer: larger batches pay. */
  readonly preferredMaxBatch = 128;
  private readonly loaded = new LoadedScripts();

  /** A Cluster's libraries, loaded on every primary (see sendScript). */
  private readonly functionPlaces: FunctionPlaces | undefined;

  constructor(readonly client: GlideClientLike | GlideClusterClientLike, kind: 'client' | 'cluster') {
    this.isCluster = kind === 'cluster';
    if (this.isCluster) {
      void loadClusterBatch();
      const cluster = client as GlideClusterClientLike;
      this.functionPlaces = { place: 'every primary', load: (args) => cluster.customCommand(args, { route: 'allPrimaries', decoder: DECODE_STRINGS }) };
    }
  }

  private send(firstKey: string | undefined, args: RedisArg[]): Promise<unknown> {
    if (this.isCluster && firstKey !== undefined) {
      const route: GlideRoute = { type: 'primarySlotKey', key: firstKey };
      return (this.client as GlideClusterClientLike).customCommand(args, { route, decoder: DECODE_STRINGS });
    }
    return this.client.customCommand(args, { decoder: DECODE_STRINGS });
  }

  runScript<Reply>(script: LuaScript, keys: readonly string[], argv: readonly (string | number)[]): Promise<Reply> {
    const args = new Array<string>(3 + keys.length + argv.length);
    const place = this.isCluster && keys.length > 0 ? String(calculateSlot(keys[0])) : '';
    args[2] = String(keys.length);
    for (let i = 0; i < keys.length; i++) args[3 + i] = keys[i];
    for (let i = 0; i < argv.length; i++) args[3 + keys.length + i] = String(argv[i]);
    const sent = this.sendScript<Reply>(script, place, keys[0], args);
    return this.isCluster ? resendWhileSlotMoves(sent, () => this.sendScript<Reply>(script, place, keys[0], args)) : sent;
  }

  /**
   * `args` (EVAL's after the first two) as FCALL, EVALSHA or EVAL (see sendScript). On a Cluster, whose places here are
   * slots (GLIDE exposes no slot table), a library is loaded on every primary at once, and a primary that has lost it
   * (a failover, a new primary, a FUNCTION FLUSH) answers "Function not found": the call goes as EVAL, and the library
   * to every primary again.
   */
  private async sendScript<Reply>(script: LuaScript, place: string, firstKey: string | undefined, args: string[]): Promise<Reply> {
    return (await sendScript(this.loaded, place, script, args, (sent) => this.sendScriptCommand(firstKey, sent), this.functionPlaces ?? true)) as Reply;
  }

  /** On a Cluster, `args` as a pipeline of one command routed by `firstKey`; else (or without ClusterBatch) as `send`. */
  private async sendScriptCommand(firstKey: string | undefined, args: RedisArg[]): Promise<unknown> {
    if (!this.isCluster || firstKey === undefined) return this.send(firstKey, args);
    const Batch = loadedBatch ?? (await loadClusterBatch());
    if (Batch === undefined) return this.send(firstKey, args);
    const batch = new Batch(false);
    batch.customCommand(args);
    const route: GlideRoute = { type: 'primarySlotKey', key: firstKey };
    // raiseOnError: the command's error is thrown, as customCommand throws it.
    const replies = await (this.client as unknown as GlideBatchRunner).exec(batch, true, { route, decoder: DECODE_STRINGS });
    return replies?.[0];
  }

  async time(): Promise<[string, string]> {
    const [seconds, micros] = (await this.send(undefined, ['TIME'])) as [unknown, unknown];
    return [String(seconds), String(micros)];
  }

  del(keys: readonly string[]): Promise<unknown> {
    return this.send(keys[0], ['DEL', ...keys]);
  }

  xadd(key: string, args: readonly string[]): Promise<unknown> {
    return this.send(key, ['XADD', key, ...args]);
  }

  nodeOf(): string | undefined {
    return undefined;
  }

  writeCorker(): WriteCorker | undefined {
    return undefined;
  }

  /**
   * The primaries answering a command routed to all of them: GLIDE keys each node's reply by its `host:port` (as
   * `[{ key, value }]`), for a command without a reply policy that would fold them into one (PING has one).
   */
  async primaries(): Promise<readonly ClusterPrimary[]> {
    if (!this.isCluster) return [];
    const cluster = this.client as GlideClusterClientLike;
    const replies = await cluster.customCommand(['CLUSTER', 'MYID'], { route: 'allPrimaries', decoder: DECODE_STRINGS });
    if (!Array.isArray(replies)) throw new Error(`GLIDE answered CLUSTER MYID on all primaries with ${JSON.stringify(replies)}, not one reply per node`);
    const addresses = replies.map((r: { key: unknown }) => String(r.key));
    return addresses.map((address) => {
      const colon = address.lastIndexOf(':');
      const route: GlideRoute = { type: 'routeByAddress', host: address.slice(0, colon), port: Number(address.slice(colon + 1)) };
      return { address, send: (args) => cluster.customCommand([...args], { route, decoder: DECODE_STRINGS }) };
    });
  }

  get isOpen(): boolean {
    return (this.client as unknown as GlideInternals).isClosed !== true;
  }

  get isReady(): boolean {
    return this.isOpen;
  }

  /** Connected when made (GLIDE) or refused unless open (node-redis): never on a first command. */
  readonly connectsOnFirstCommand = false;

  // GLIDE has no events: it reconnects by itself, and requests time out while it is away.
  on(): void {}

  off(): void {}

  async connect(): Promise<void> {}

  async close(): Promise<void> {
    this.client.close();
  }

  unsafeSettings(timeoutMs: number): { problems: string[]; risk: string } {
    const requestTimeoutMs = this.requestTimeoutMs;
    // GLIDE gives up on a command after requestTimeout, yet the command may still run. Past timeoutMs its deadline
    // makes it record nothing; before, it counts a request the failure policy decided.
    const problems = requestTimeoutMs < timeoutMs ? [`requestTimeout is ${requestTimeoutMs} ms, shorter than timeoutMs (${timeoutMs} ms)`] : [];
    return { problems, risk: `a command GLIDE gave up on can still run before its deadline and count; set requestTimeout to at least ${timeoutMs} ms` };
  }

  /** GLIDE's request timeout, in ms. */
  get requestTimeoutMs(): number {
    return (this.client as unknown as GlideInternals).requestTimeout ?? GLIDE_DEFAULT_REQUEST_TIMEOUT_MS;
  }

  describe(): string {
    return this.isCluster ? 'a Valkey GLIDE cluster client' : 'a Valkey GLIDE client';
  }
}
