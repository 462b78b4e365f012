import type { Cluster, Redis } from 'ioredis';
import type { LuaScript } from './redis-script.call.js';
import { unsafeIoRedisSettings } from './ioredis.factory.js';
import { callScript } from './ioredis.script-command.js';
import { RedisWriteCorker } from './ioredis.write-corker.js';
import type { RedisClientPort, WriteCorker } from './redis-client.port.js';

/**
 * ioredis 5 and 6, and iovalkey (a fork of ioredis 5 with the same API): `Redis` (standalone or Sentinel) and
 * `Cluster`. Scripts go through ScriptCommand (EVAL on a connection's first call, EVALSHA after, EVAL again after
 * a NOSCRIPT), with no argument flattening and no promise of its own.
 */
export class IoRedisAdapter implements RedisClientPort {
  readonly isCluster: boolean;

  constructor(
    readonly client: Redis | Cluster,
    readonly library: 'ioredis' | 'iovalkey',
  ) {
    this.isCluster = client.isCluster;
  }

  runScript<Reply>(script: LuaScript, keys: readonly string[], argv: readonly (string | number)[]): Promise<Reply> {
    return callScript<Reply>(this.client, script, keys, argv);
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
