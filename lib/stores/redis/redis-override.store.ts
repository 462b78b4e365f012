import type { Clock } from '../../interfaces/clock.interface.js';
import type { OverrideSnapshot, OverrideStore, RateLimitOverride, StoredOverride } from '../../interfaces/override.interface.js';
import { overrideIndexKey, overrideKey } from '../../keys/key.builder.js';
import { loadScript } from './lua-script.loader.js';
import { luaScript, type LuaScript } from './clients/redis-script.call.js';
import type { RedisClientPort } from './clients/redis-client.port.js';

/** The admin script (lua/overrides.lua), read on first use: an app that never sets an override never loads it. */
let script: LuaScript | undefined;

/**
 * Overrides in Redis (see lua/overrides.lua): each in a key beside its rule's state (same slot), which the decisions'
 * script reads; an index per key prefix lists them. The override is written after its index entry and removed
 * before it, so the index never misses one that is in force but for a crash between the two. Listing skips an entry
 * with no override behind it and leaves it to end with its score: it may be a set whose key is not written yet, and
 * dropping it lost that override from every later listing. Times are µs on the decisions' clock: the `clock` given,
 * else Redis's TIME, read in the script.
 */
export class RedisOverrideStore implements OverrideStore {
  private readonly index: string;

  constructor(
    private readonly port: RedisClientPort,
    private readonly prefix: string,
    private readonly clock?: Clock,
  ) {
    this.index = overrideIndexKey(prefix);
  }

  async set(rule: string, key: string, override: StoredOverride): Promise<RateLimitOverride> {
    const member = JSON.stringify([rule, key]);
    // One now for both: the index entry ends exactly when the override does (its key's PX, a round trip later, after).
    const now = await this.now();
    await this.run(this.index, 'index', now, now + override.ttlMs * 1000, member);
    const info = JSON.stringify(override.reason === undefined ? [key] : [key, override.reason]);
    const ends = Number(await this.run(overrideKey(this.prefix, rule, key), 'set', now, override.ttlMs, override.limit ?? 'b', info));
    return { rule, key, ...(override.limit === undefined ? {} : { limit: override.limit }), block: override.limit === undefined, expiresAt: ends / 1000, ...(override.reason === undefined ? {} : { reason: override.reason }) };
  }

  async get(rule: string, key: string): Promise<RateLimitOverride | undefined> {
    const [raw, now] = (await this.run(overrideKey(this.prefix, rule, key), 'get', this.clock ? this.clockUs() : '')) as [unknown, number];
    return raw ? parse(rule, String(raw), Number(now)) : undefined;
  }

  async remove(rule: string, key: string): Promise<boolean> {
    const existed = Number(await this.run(overrideKey(this.prefix, rule, key), 'del', '')) > 0;
    await this.run(this.index, 'unindex', this.clock ? this.clockUs() : '', JSON.stringify([rule, key]));
    return existed;
  }

  async list(rule?: string): Promise<RateLimitOverride[]> {
    const reply = (await this.run(this.index, 'list', this.clock ? this.clockUs() : '')) as unknown[];
    const found: Promise<RateLimitOverride | undefined>[] = [];
    for (let i = 1; i < reply.length; i += 2) {
      const [name, key] = JSON.parse(String(reply[i])) as [string, string];
      if (rule === undefined || name === rule) found.push(this.get(name, key));
    }
    const overrides = (await Promise.all(found)).filter((o): o is RateLimitOverride => o !== undefined);
    return overrides.sort((a, b) => a.expiresAt - b.expiresAt);
  }

  /**
   * Every override in force, from one read of the index: an override is read from its key only when its index entry
   * (its rule, tracker and end) is not in `previous`, so a refresh of an unchanged set is one call, however many.
   */
  async snapshot(previous?: OverrideSnapshot): Promise<OverrideSnapshot> {
    const reply = (await this.run(this.index, 'list', this.clock ? this.clockUs() : '')) as unknown[];
    const overrides = new Map<string, RateLimitOverride>();
    const reads: Promise<void>[] = [];
    for (let i = 1; i < reply.length; i += 2) {
      const member = String(reply[i]);
      // A set replaces the index entry with the override's new end: the same member and end is the same override.
      const id = `${member}@${String(reply[i + 1])}`;
      const known = previous?.overrides.get(id);
      if (known !== undefined) {
        overrides.set(id, known);
        continue;
      }
      const [name, key] = JSON.parse(member) as [string, string];
      reads.push(
        this.get(name, key).then((override) => {
          if (override !== undefined) overrides.set(id, override);
        }),
      );
    }
    await Promise.all(reads);
    return { overrides };
  }

  /** Now in µs on the decisions' clock: the `clock`, else Redis's TIME. */
  private async now(): Promise<number> {
    if (this.clock) return this.clockUs();
    const [seconds, micros] = await this.port.time();
    return Number(seconds) * 1_000_000 + Number(micros);
  }

  private clockUs(): number {
    return Math.floor(this.clock!() * 1000);
  }

  private run(key: string, op: string, now: number | string, ...args: (string | number)[]): Promise<unknown> {
    script ??= luaScript(loadScript('overrides'));
    return this.port.runScript(script, [key], [op, now, ...args]);
  }
}

/** An override key's value (see lua/overrides.lua) read at `now` (µs): undefined once it has ended on that clock. */
function parse(rule: string, raw: string, now: number): RateLimitOverride | undefined {
  const match = /^(\d+):(\w+):(.*)$/s.exec(raw);
  if (!match || Number(match[1]) <= now) return undefined;
  const [key, reason] = JSON.parse(match[3]) as [string, string?];
  const block = match[2] === 'b';
  return { rule, key, ...(block ? {} : { limit: Number(match[2]) }), block, expiresAt: Number(match[1]) / 1000, ...(reason === undefined ? {} : { reason }) };
}
