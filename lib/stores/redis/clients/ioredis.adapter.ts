import type { Cluster, Redis } from 'ioredis';
import type { LuaScript } from './redis-script.call.js';
import { unsafeIoRedisSettings } from './ioredis.factory.js';
import { loadLibrary, type IoRedisLibrary } from './client-library.loader.js';
import { callScript, scriptCommandOf, type ScriptCommandClass } from './ioredis.script-command.js';
import { RedisWriteCorker } from './ioredis.write-corker.js';
import type { ClusterPrimary, RedisClientPort, WriteCorker } from './redis-client.port.js';

/**
 * ioredis 5 and 6, and iovalkey (a fork of ioredis 5 with the same API): `Redis` (standalone or Sentinel) and
 * `Cluster`. Scripts go through ScriptCommand (EVAL on a connection's first call, EVALSHA after, EVAL again after
 * a NOSCRIPT), with no argument flattening and no promise of its own.
 */
export class IoRedisAdapter implements RedisClientPort {
  readonly isCluster: boolean;
  /** The library's ScriptCommand, once its library is loaded (at once when it is given). */
  private scriptCommand?: ScriptCommandClass;
  private readonly loading: Promise<ScriptCommandClass>;

  /**
   * @param library the client's library, loaded here (not when this file is: every library is an optional peer)
   * unless `loaded`, its module, is given
   */
  constructor(
    readonly client: Redis | Cluster,
    readonly library: 'ioredis' | 'iovalkey',
    loaded?: IoRedisLibrary,
  ) {
    this.isCluster = client.isCluster;
    if (loaded) this.scriptCommand = scriptCommandOf(loaded);
    this.loading = this.scriptCommand
      ? Promise.resolve(this.scriptCommand)
      : loadLibrary(library).then((module) => {
          if (!module) throw new Error(`The ${library} package could not be loaded, though a ${library} client was passed as "store"`);
          return (this.scriptCommand = scriptCommandOf(module));
        });
    // Failing there fails the first script call; until then, it is no unhandled rejection.
    this.loading.catch(() => undefined);
  }

  runScript<Reply>(script: LuaScript, keys: readonly string[], argv: readonly (string | number)[]): Promise<Reply> {
    const ScriptCommand = this.scriptCommand;
    if (ScriptCommand) return callScript<Reply>(ScriptCommand, this.client, script, keys, argv);
    return this.loading.then((loaded) => callScript<Reply>(loaded, this.client, script, keys, argv));
  }

  async time(): Promise<[string, string]> {
    const [seconds, micros] = await this.client.time();
    return [String(seconds), String(micros)];
  }

  del(keys: readonly string[]): Promise<unknown> {
    return this.client.del(...keys);
  }

  xadd(key: string, args: readonly string[]): Promise<unknown> {
    return (this.client.xadd as (key: string, ...args: string[]) => Promise<unknown>)(key, ...args);
  }

  nodeOf(slot: number): string | undefined {
    return this.isCluster ? (this.client as Cluster).slots[slot]?.[0] : undefined;
  }

  writeCorker(): WriteCorker | undefined {
    return new RedisWriteCorker(this.client);
  }

  async primaries(): Promise<readonly ClusterPrimary[]> {
    if (!this.isCluster) return [];
    return (this.client as Cluster).nodes('master').map((node) => ({
      address: `${node.options.host}:${node.options.port}`,
      send: ([command, ...args]) => node.call(command, ...args),
    }));
  }

  get isOpen(): boolean {
    return this.client.status !== 'end';
  }

  get isReady(): boolean {
    return this.client.status === 'ready';
  }

  get connectsOnFirstCommand(): boolean {
    return this.client.status === 'wait';
  }

  on(event: string, listener: (...args: any[]) => void): void {
    this.client.on(event, listener);
  }

  off(event: string, listener: (...args: any[]) => void): void {
    this.client.off(event, listener);
  }

  async connect(): Promise<void> {
    await this.client.connect();
  }

  async close(now = false): Promise<void> {
    // quit() waits for replies in flight; a client that never connected can only be disconnected.
    if (now) return this.client.disconnect();
    await this.client.quit().catch(() => this.client.disconnect());
  }

  unsafeSettings(_timeoutMs?: number): { problems: string[]; risk: string } {
    return { problems: unsafeIoRedisSettings(this.client), risk: 'a resent command can count twice; see safeClientOptions()' };
  }

  describe(): string {
    if (this.client.isCluster) return 'a Redis Cluster';
    const { host, port, db, sentinels, name } = (this.client as Redis).options;
    return sentinels ? `Sentinel master "${name}", database ${db ?? 0}` : `${host}:${port}, database ${db ?? 0}`;
  }
}
