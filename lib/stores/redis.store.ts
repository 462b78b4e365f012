import calculateSlot from 'cluster-key-slot';
import type { Cluster, Redis, Result } from 'ioredis';
import { ALGORITHM_DEFINITIONS } from '../algorithms/algorithm.registry.js';
import { throttle, type ThrottleReply } from '../algorithms/gcra.throttle.js';
import type { Clock } from '../interfaces/clock.interface.js';
import type { Decision, MultiDecision } from '../interfaces/decision.interface.js';
import type { RateLimitRule } from '../interfaces/rule.interface.js';
import type { RateLimitStore, RuleKey } from '../interfaces/store.interface.js';
import { loadCombinedScript, loadScript } from './lua-script.loader.js';
import { expandDecisions, planRules, toDecision, type PlannedRule, type StoreOp } from './store.plan.js';

declare module 'ioredis' {
  interface RedisCommander<Context> {
    /** One of the rate-limit scripts (see lua/*.lua); registered by RedisStore with defineCommand. */
    [command: `rateLimit${string}`]: (numberOfKeys: number, ...args: (string | number)[]) => Result<number[], Context>;
  }
}

export interface RedisStoreOptions {
  /** Prefix of every key: `<prefix>:<rule>:<algorithm>:{<tracker>}`. Must not contain `{` or `}`. @default 'rl' */
  keyPrefix?: string;
  /** Time source in ms since the epoch. @default Redis's own clock (`TIME`, read inside the script) */
  clock?: Clock;
  /**
   * How long a caller waits for a decision, in ms. Each command then carries a deadline that far ahead, in
   * Redis's clock, and a command executed after it (the caller gave up: Redis stalled, the network queued it)
   * writes nothing and fails with `RateLimitDeadlineError`. Ignored with `clock`. @default none
   */
  timeoutMs?: number;
}

/** A command reached Redis after its deadline, so nothing was recorded. */
export class RateLimitDeadlineError extends Error {
  constructor() {
    super('The rate-limit command reached Redis after its deadline; nothing was recorded');
    this.name = 'RateLimitDeadlineError';
  }
}

// How often the estimate of Redis's clock against ours is refreshed.
const CLOCK_SYNC_MS = 60_000;

const COMBINED = 'rateLimitAll' as const;
const COMMAND_NAMES = new Map<string, `rateLimit${string}`>();
/** `sliding-window` -> `rateLimitSlidingWindow`, worked out once per script (this is on every decision's path). */
function commandName(script: string): `rateLimit${string}` {
  let name = COMMAND_NAMES.get(script);
  if (!name) COMMAND_NAMES.set(script, (name = `rateLimit${script.replace(/(^|-)(\w)/g, (_m, _d, c: string) => c.toUpperCase())}`));
  return name;
}

/**
 * Decides in Redis, atomically, with one Lua script per algorithm registered through ioredis's `defineCommand`
 * (EVALSHA, with a transparent EVAL on NOSCRIPT after a restart or SCRIPT FLUSH). Works on a `Redis` or a
 * `Cluster` client; the client is the caller's and is never closed here.
 */
export class RedisStore implements RateLimitStore {
  private readonly prefix: string;
  private readonly clock?: Clock;
  private readonly timeoutMs?: number;
  /** Redis's clock minus ours, in µs, plus the measurement's uncertainty (half its round trip). */
  private offsetUs?: number;
  private syncedAt = -Infinity;
  private syncing?: Promise<void>;

  constructor(
    readonly client: Redis | Cluster,
    options: RedisStoreOptions = {},
  ) {
    this.prefix = options.keyPrefix ?? 'rl';
    if (/[{}]/.test(this.prefix)) {
      throw new RangeError(`Invalid Redis store option "keyPrefix": ${JSON.stringify(this.prefix)} (expected no "{" or "}": they would set the cluster hash tag)`);
    }
    this.clock = options.clock;
    if (options.timeoutMs !== undefined && (!Number.isFinite(options.timeoutMs) || options.timeoutMs <= 0)) {
      throw new RangeError(`Invalid Redis store option "timeoutMs": ${String(options.timeoutMs)} (expected a positive number of ms)`);
    }
    this.timeoutMs = options.clock ? undefined : options.timeoutMs;
    const scripts = Object.values(ALGORITHM_DEFINITIONS).map((d) => d.script);
    // defineCommand only stores the source; a client shared by several stores gets the same definitions again.
    for (const script of scripts) client.defineCommand(commandName(script), { lua: loadScript(script) });
    client.defineCommand(COMBINED, { lua: loadCombinedScript(scripts) });
  }

  async consume(key: string, rule: RateLimitRule, cost = 1): Promise<Decision> {
    return (await this.decide('consume', planRules(this.prefix, [{ key, rule }], cost, 'consume').rules)).decisions[0];
  }

  async consumeAll(entries: readonly RuleKey[], cost = 1): Promise<MultiDecision> {
    // Repeats of one state key are one merged rule here, on one node and in one script; each entry gets its copy back.
    const plan = planRules(this.prefix, entries, cost, 'consume');
    const result = this.spansSlots(plan.rules) ? await this.consumeInOrder(plan.rules) : await this.decide('consume', plan.rules);
    return expandDecisions(plan, result);
  }

  async peek(key: string, rule: RateLimitRule, cost = 1): Promise<Decision> {
    return (await this.decide('peek', planRules(this.prefix, [{ key, rule }], cost, 'peek').rules)).decisions[0];
  }

  async refund(key: string, rule: RateLimitRule, cost = 1): Promise<void> {
    const reply = await this.call('refund', planRules(this.prefix, [{ key, rule }], cost, 'refund').rules);
    if (reply[0] === -1) throw new RateLimitDeadlineError();
  }

  /** redis-cell's `CL.THROTTLE key max_burst count period [quantity]` (period in seconds), with its five-value reply. */
  throttle(key: string, maxBurst: number, count: number, period: number, quantity = 1): Promise<ThrottleReply> {
    return throttle(this, key, maxBurst, count, period, quantity);
  }

  async reset(key: string, rule: RateLimitRule): Promise<void> {
    const [planned] = planRules(this.prefix, [{ key, rule }], 0, 'peek').rules;
    await this.client.del(planned.keys.state, planned.keys.block);
  }

  private async decide(op: StoreOp, rules: PlannedRule[]): Promise<MultiDecision> {
    const reply = await this.call(op, rules);
    if (reply.length === 1 && reply[0] === -1) throw new RateLimitDeadlineError();
    if (!Array.isArray(reply) || reply.length !== 1 + 4 * rules.length || !reply.every(Number.isInteger)) {
      throw new Error(`Unexpected reply from the rate-limit script: ${JSON.stringify(reply)}`);
    }
    return {
      allowed: reply[0] === 1,
      decisions: rules.map((r, i) => toDecision(r, reply[1 + 4 * i] === 1, reply[2 + 4 * i], reply[3 + 4 * i], reply[4 + 4 * i])),
    };
  }

  private call(op: StoreOp, rules: PlannedRule[]): Promise<number[]> {
    const keys: string[] = [];
    const argv: (string | number)[] = [this.clock ? Math.floor(this.clock() * 1000) : '', op, this.deadline()];
    for (const r of rules) {
      keys.push(r.keys.state, r.keys.block);
      argv.push(r.definition.tag, r.rule.limit, r.rule.windowMs, r.rule.blockMs, r.params.param, r.cost);
    }
    const script = rules.every((r) => r.definition === rules[0].definition) ? commandName(rules[0].definition.script) : COMBINED;
    return this.client[script](keys.length, ...keys, ...argv);
  }

  /** The deadline ARGV: now + timeoutMs in Redis's clock, once that clock has been measured; '' otherwise. */
  private deadline(): number | '' {
    if (this.timeoutMs === undefined) return '';
    const now = Date.now();
    if (now - this.syncedAt > CLOCK_SYNC_MS && !this.syncing) {
      this.syncing = this.syncClock().finally(() => (this.syncing = undefined));
    }
    return this.offsetUs === undefined ? '' : Math.floor((now + this.timeoutMs) * 1000 + this.offsetUs);
  }

  private async syncClock(): Promise<void> {
    try {
      const before = Date.now();
      const [seconds, micros] = await this.client.time();
      const after = Date.now();
      const redisUs = Number(seconds) * 1_000_000 + Number(micros);
      // Erring late by the round trip's half only lets a command through that the caller may have just given up on.
      this.offsetUs = redisUs - ((before + after) / 2) * 1000 + ((after - before) / 2) * 1000;
      this.syncedAt = after;
    } catch {
      // Redis is unavailable: keep the previous estimate, try again on a later call.
    }
  }

  /** On a Cluster, rules of different trackers can live on different nodes, where no script can reach both. */
  private spansSlots(rules: PlannedRule[]): boolean {
    if (!this.client.isCluster || rules.length < 2) return false;
    const slot = calculateSlot(rules[0].keys.state);
    return rules.some((r) => calculateSlot(r.keys.state) !== slot);
  }

  /**
   * Not atomic: consumes rule by rule and, when one refuses, refunds those already consumed. Another request can
   * see the earlier rules' units in between. Used only on a Cluster, for rules whose keys are on different slots.
   */
  private async consumeInOrder(rules: PlannedRule[]): Promise<MultiDecision> {
    const decisions: Decision[] = [];
    for (let i = 0; i < rules.length; i++) {
      const [decision] = (await this.decide('consume', [rules[i]])).decisions;
      decisions.push(decision);
      if (!decision.allowed) {
        await Promise.all(rules.slice(0, i).map((r) => this.call('refund', [r])));
        const rest = await Promise.all(rules.slice(i + 1).map(async (r) => (await this.decide('peek', [r])).decisions[0]));
        return { allowed: false, decisions: [...decisions, ...rest] };
      }
    }
    return { allowed: true, decisions };
  }
}
