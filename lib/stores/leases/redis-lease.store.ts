import type { Clock } from '../../interfaces/clock.interface.js';
import type { LeaseDecision, LeaseHandle, LeaseStore } from '../../interfaces/lease-store.interface.js';
import type { RateLimitRule } from '../../interfaces/rule.interface.js';
import { leaseKey } from '../../keys/key.builder.js';
import { checkLeaseCall, newLeaseId } from './lease.check.js';
import { loadScript } from '../redis/lua-script.loader.js';
import type { RedisClientLike } from '../../interfaces/redis-client.interface.js';
import { luaScript, type LuaScript } from '../redis/clients/redis-script.call.js';
import { clientPort } from '../redis/clients/client.recognizer.js';
import type { RedisClientPort } from '../redis/clients/redis-client.port.js';

export interface RedisLeaseStoreOptions {
  /** Prefix of every key: `<prefix>:<rule>:cc:{<tracker>}`. Must not contain `{` or `}`. @default 'rl' */
  keyPrefix?: string;
  /** Time source in ms since the epoch. @default Redis's own clock (`TIME`, read inside the script) */
  clock?: Clock;
}

/**
 * The leases of concurrency rules in Redis: one sorted set per tracker, changed atomically by lua/concurrency.lua
 * (EVALSHA, with an EVAL on NOSCRIPT). One key per call, so it works on a Cluster.
 */
export class RedisLeaseStore implements LeaseStore {
  private readonly prefix: string;
  private readonly clock?: Clock;
  private readonly script: LuaScript;
  private readonly port: RedisClientPort;

  constructor(
    readonly client: RedisClientLike | RedisClientPort,
    options: RedisLeaseStoreOptions = {},
  ) {
    this.port = clientPort(client, 'RedisLeaseStore client');
    this.prefix = options.keyPrefix ?? 'rl';
    if (/[{}]/.test(this.prefix)) {
      throw new RangeError(`Invalid Redis lease store option "keyPrefix": ${JSON.stringify(this.prefix)} (expected no "{" or "}": they would set the cluster hash tag)`);
    }
    this.clock = options.clock;
    this.script = luaScript(loadScript('concurrency'));
  }

  async acquire(key: string, rule: RateLimitRule): Promise<LeaseDecision> {
    checkLeaseCall(key, rule);
    const setKey = leaseKey(this.prefix, rule, key);
    const id = newLeaseId();
    const reply = await this.send(setKey, 'acquire', id, rule.limit, rule.leaseMs!);
    if (reply.length !== 3 || !reply.every(Number.isInteger)) throw new Error(`Unexpected reply from the concurrency script: ${JSON.stringify(reply)}`);
    const [acquired, inFlight, waitMs] = reply;
    if (acquired !== 1) return { acquired: false, limit: rule.limit, inFlight, retryAfterMs: waitMs };
    return { acquired: true, limit: rule.limit, inFlight, retryAfterMs: 0, lease: this.handle(setKey, id, rule.leaseMs!) };
  }

  private handle(setKey: string, id: string, leaseMs: number): LeaseHandle {
    return {
      id,
      renew: async () => (await this.send(setKey, 'renew', id, 0, leaseMs))[0] === 1,
      release: async () => {
        await this.send(setKey, 'release', id, 0, 0);
      },
    };
  }

  private send(setKey: string, op: string, id: string, limit: number, leaseMs: number): Promise<number[]> {
    return this.port.runScript(this.script, [setKey], [this.clock ? Math.floor(this.clock() * 1000) : '', op, id, limit, leaseMs]);
  }
}
