import calculateSlot from 'cluster-key-slot';
import { ALGORITHM_DEFINITIONS } from '../../algorithms/algorithm.registry.js';
import { throttle, type ThrottleReply } from '../gcra.throttle.js';
import type { Clock } from '../../interfaces/clock.interface.js';
import type { BudgetGrant, BudgetStore } from '../../interfaces/budget.interface.js';
import type { Decision, MultiDecision } from '../../interfaces/decision.interface.js';
import type { RateLimitRule } from '../../interfaces/rule.interface.js';
import type { RateLimitStore, RuleKey } from '../../interfaces/store.interface.js';
import { decisionScript, loadCombinedScript, loadDriverCode } from './lua-script.loader.js';
import { RedisClockOffset } from './redis-clock.offset.js';
import { RedisOverrideStore } from './redis-override.store.js';
import type { LuaScript } from './clients/redis-script.call.js';
import { DEFAULT_MAX_BATCH, RedisCallBatcher, type CoalesceOptions, type PendingCall } from './redis-call.batcher.js';
import { ReplyReader, checkReply, encodeBatch, type ScriptCall, type ScriptReply } from './redis-call.codec.js';
import { expandDecisions, planRule, planRules, type PlannedRule, type StoreOp } from '../store.plan.js';
import type { RedisClientLike } from '../../interfaces/redis-client.interface.js';
import { clientPort } from './clients/client.recognizer.js';
import type { RedisClientPort, WriteCorker } from './clients/redis-client.port.js';

export interface RedisStoreOptions {
  /** Prefix of every key: `<prefix>:<rule>:<tag>:{<tracker>}` (see keys/key.builder.ts). Must not contain `{` or `}`. @default 'rl' */
  keyPrefix?: string;
  /**
   * Time source in ms since the epoch. Keys still expire on Redis's clock: one that runs far behind it can see state
   * expire before the clock says it is spent (fixed-window keys get a second of slack under such a clock).
   * @default Redis's own clock (`TIME`, read inside the script)
   */
  clock?: Clock;
  /**
   * How long a caller waits for a decision, in ms. Each command then carries a deadline that far ahead, in
   * Redis's clock (measured with `TIME` when the store is made; until then, the app's clock with 250 ms for the
   * clocks' difference), and a command executed after it (the caller gave up: Redis stalled, the network queued
   * it) writes nothing and fails with `RateLimitDeadlineError`. Ignored with `clock`. @default none
   */
  timeoutMs?: number;
  /**
   * Coalescing: the calls made in one turn of the event loop go to Redis as one script call (per Cluster node),
   * which decides them in order, each exactly as if sent alone; a lone call goes out at once. `false` sends one
   * script call per decision (on a `Redis` client, those made in one turn share one socket write, as with ioredis's
   * auto-pipelining): for a Redis shared with latency-critical commands, which a script call deciding
   * `maxBatch` calls (about 1 µs each; sliding-log calls of large cost about 1.2 µs per entry, at most 256 entries
   * a batch, see MAX_BATCH_ENTRIES) holds back. `true` is the default. @default { maxBatch: 64 } (128 on a GLIDE client)
   */
  coalesce?: boolean | CoalesceOptions;
  /**
   * Call the decision scripts as a Redis function library: loaded once per server (`FUNCTION LOAD`, a library named
   * `rrl_<sha1 of the script>`), then called with `FCALL`, where the server has functions (Redis 7+, Valkey), on
   * every client library (a GLIDE Cluster client, which shows no slot table, loads it on every primary at once). A
   * library's code is made once, when it is loaded, where an `EVALSHA` makes the script's functions and tables anew
   * on every call, and it keeps the rule definitions it has read: a decision sent alone costs Redis about a third
   * fewer instructions. Where the server refuses `FUNCTION LOAD` (Redis 6, an ACL, a renamed command), scripts go as
   * `EVALSHA`. `false`: `EVALSHA` only, nothing kept in the server's function libraries. @default true
   */
  functions?: boolean;
}

/** A command reached Redis after its deadline, so nothing was recorded. */
export class RateLimitDeadlineError extends Error {
  /** The round trip of the refused command, in ms. */
  readonly roundTripMs?: number;
  /**
   * True when Redis answered within `timeoutMs`: the command was not late, Redis's clock had stepped past our
   * estimate of it. Redis is healthy, so the circuit breaker does not count it.
   */
  readonly promptReply: boolean;

  constructor(detail: { roundTripMs?: number; timeoutMs?: number; message?: string } = {}) {
    super(detail.message ?? 'The rate-limit command reached Redis after its deadline; nothing was recorded');
    this.name = 'RateLimitDeadlineError';
    this.roundTripMs = detail.roundTripMs;
    this.promptReply = detail.roundTripMs !== undefined && detail.timeoutMs !== undefined && detail.roundTripMs < detail.timeoutMs;
  }
}

/** The combined script's name among the scripts: a batch of calls of several algorithms. */
const COMBINED = 'all';
/**
 * The combined script with the Redis 7 flag that lets it reach keys of several slots of one Cluster node: a batch
 * declares one call's keys in KEYS (which must hash to one slot, and route the call) and passes the others in ARGV.
 */
const CROSS_SLOT = 'all-cross-slot';
/** The script replied { -2 }: a key it was given in ARGV is not on this node (a slot moved); nothing was written. */
const NOT_HERE = -2;
// Replies that mean a Cluster batch did not run on the node it was sent to, or the server cannot run the flag.
const SEND_ONE_BY_ONE = /^(MOVED|ASK|TRYAGAIN|CROSSSLOT|CLUSTERDOWN)\b|non local key|Unexpected flag|shebang|Error compiling script/i;

/**
 * Decides in Redis, atomically, with one Lua script per algorithm (EVALSHA, with a transparent EVAL on NOSCRIPT: a
 * new connection's first call, a restart, a SCRIPT FLUSH). Works on any supported client, standalone or Cluster
 * (ioredis, iovalkey, node-redis, GLIDE), through its adapter (stores/redis/clients); the client is the caller's and
 * is never closed here.
 */
export class RedisStore implements RateLimitStore {
  private readonly prefix: string;
  private readonly clock?: Clock;
  private readonly timeoutMs?: number;
  private readonly redisClock: RedisClockOffset;
  /** The scripts by name: one per algorithm (its file's), the combined one for a batch of several, and its cross-slot twin. */
  private readonly scripts = new Map<string, LuaScript>();
  private readonly batcher?: RedisCallBatcher;
  /** With coalescing off: the calls of one turn in one socket write, each its own script call. */
  private readonly corker?: WriteCorker;
  /** The client, through its library's adapter. */
  private readonly port: RedisClientPort;
  /** Whether this Cluster's nodes run the cross-slot script (Redis 7); cleared when one refuses it. */
  private crossSlot: boolean;
  /** Per-tracker overrides of the rules with `overrides: true`, which the scripts read as they decide. */
  readonly overrides: RedisOverrideStore;
  /** Units taken ahead for the local budgets of rules with `localBudget`, and given back, by the same scripts. */
  readonly budgets: BudgetStore = {
    take: (key, rule, units) => this.takeBudget(key, rule, units),
    giveBack: (key, rule, units, ticket) => this.giveBudgetBack(key, rule, units, ticket),
  };

  constructor(
    readonly client: RedisClientLike | RedisClientPort,
    options: RedisStoreOptions = {},
  ) {
    this.port = clientPort(client, 'RedisStore client');
    this.prefix = options.keyPrefix ?? 'rl';
    if (/[{}]/.test(this.prefix)) {
      throw new RangeError(`Invalid Redis store option "keyPrefix": ${JSON.stringify(this.prefix)} (expected no "{" or "}": they would set the cluster hash tag)`);
    }
    this.clock = options.clock;
    if (options.timeoutMs !== undefined && (!Number.isFinite(options.timeoutMs) || options.timeoutMs <= 0)) {
      throw new RangeError(`Invalid Redis store option "timeoutMs": ${String(options.timeoutMs)} (expected a positive number of ms)`);
    }
    this.timeoutMs = options.clock ? undefined : options.timeoutMs;
    this.redisClock = new RedisClockOffset(this.port);
    this.overrides = new RedisOverrideStore(this.port, this.prefix, this.clock);
    // Measured now, so that the first decisions carry a deadline in Redis's clock (until then, one in ours).
    if (this.timeoutMs !== undefined) this.redisClock.start();
    const scripts = Object.values(ALGORITHM_DEFINITIONS).map((d) => d.script);
    if (options.functions !== undefined && typeof options.functions !== 'boolean') {
      throw new RangeError(`Invalid Redis store option "functions": ${String(options.functions)} (expected true or false)`);
    }
    const functions = options.functions !== false;
    for (const script of scripts) this.scripts.set(script, decisionScript(loadDriverCode(script), { functions }));
    const combined = loadCombinedScript(scripts);
    this.scripts.set(COMBINED, decisionScript(combined, { functions }));
    this.crossSlot = this.port.isCluster;
    if (this.port.isCluster) this.scripts.set(CROSS_SLOT, decisionScript(combined, { functions, flags: 'allow-cross-slot-keys' }));
    const coalesce = options.coalesce === undefined || options.coalesce === true ? {} : options.coalesce;
    if (coalesce !== false) {
      const maxBatch = coalesce.maxBatch ?? this.port.preferredMaxBatch ?? DEFAULT_MAX_BATCH;
      if (!Number.isSafeInteger(maxBatch) || maxBatch < 1 || maxBatch > 10_000) {
        throw new RangeError(`Invalid Redis store option "coalesce.maxBatch": ${String(maxBatch)} (expected an integer from 1 to 10000)`);
      }
      const fromImmediate = this.port.writesFromImmediate === true;
      this.batcher = new RedisCallBatcher((calls, landed) => this.dispatch(calls, landed), maxBatch, fromImmediate, fromImmediate && !this.port.isCluster);
    } else {
      this.corker = this.port.writeCorker();
    }
  }

  /** The prefix of every key this store writes (`<prefix>:<rule>:{<tracker>}`). */
  get keyPrefix(): string {
    return this.prefix;
  }

  consume(key: string, rule: RateLimitRule, cost = 1): Promise<Decision> {
    return this.decideOne('consume', key, rule, cost);
  }

  async consumeAll(entries: readonly RuleKey[], cost = 1): Promise<MultiDecision> {
    // Repeats of one state key are one merged rule here, on one node and in one script; each entry gets its copy back.
    const plan = planRules(this.prefix, entries, cost, 'consume');
    const result = this.spansSlots(plan.rules) ? await this.consumeInOrder(plan.rules) : await this.decide('consume', plan.rules);
    return expandDecisions(plan, result);
  }

  peek(key: string, rule: RateLimitRule, cost = 1): Promise<Decision> {
    return this.decideOne('peek', key, rule, cost);
  }

  async refund(key: string, rule: RateLimitRule, cost = 1): Promise<void> {
    await this.run('refund', [planRule(this.prefix, key, rule, cost, 'refund')]);
  }

  /** redis-cell's `CL.THROTTLE key max_burst count period [quantity]` (period in seconds), with its five-value reply. */
  throttle(key: string, maxBurst: number, count: number, period: number, quantity = 1): Promise<ThrottleReply> {
    return throttle(this, key, maxBurst, count, period, quantity);
  }

  private async takeBudget(key: string, rule: RateLimitRule, units: number): Promise<BudgetGrant> {
    const rules = [planRule(this.prefix, key, rule, units, 'lease')];
    if (this.batcher) return this.batcher.submit('lease', rules, true);
    const calls: ScriptCall[] = [{ op: 'lease', rules }];
    const reply = await this.callInTime(calls, Date.now());
    checkReply(reply, calls);
    return new ReplyReader(reply).grant(rules[0]);
  }

  private async giveBudgetBack(key: string, rule: RateLimitRule, units: number, ticket: number): Promise<void> {
    const rules = [planRule(this.prefix, key, rule, units, 'return')];
    if (this.batcher) return this.batcher.submit('return', rules, true, ticket);
    const calls: ScriptCall[] = [{ op: 'return', rules, till: ticket }];
    checkReply(await this.callInTime(calls, Date.now()), calls);
  }

  async reset(key: string, rule: RateLimitRule): Promise<void> {
    const planned = planRule(this.prefix, key, rule, 0, 'peek');
    await this.port.del([planned.keys.state, planned.keys.block]);
  }

  private async decide(op: 'consume' | 'peek', rules: PlannedRule[]): Promise<MultiDecision> {
    return (await this.run(op, rules))!;
  }

  /**
   * One rule's Decision, on the path most calls take: no async frame and no MultiDecision around it. A call the
   * checks refuse is a rejected promise, as from an async method.
   */
  private decideOne(op: 'consume' | 'peek', key: string, rule: RateLimitRule, cost: number): Promise<Decision> {
    let rules: PlannedRule[];
    try {
      rules = [planRule(this.prefix, key, rule, cost, op)];
    } catch (error) {
      return Promise.reject(error);
    }
    if (this.batcher) return this.batcher.submit(op, rules, true);
    // Read as the batcher's settle reads a one-rule call: no MultiDecision to unwrap, nor an async frame for it.
    const calls: ScriptCall[] = [{ op, rules }];
    return this.callInTime(calls, Date.now()).then((reply) => {
      checkReply(reply, calls);
      return new ReplyReader(reply).decision(rules[0]);
    });
  }

  /** A call's decisions (undefined for a refund): through the batcher, or as a script call of its own. */
  private async run(op: StoreOp, rules: PlannedRule[]): Promise<MultiDecision | undefined> {
    if (this.batcher) return this.batcher.submit(op, rules, false);
    const calls: ScriptCall[] = [{ op, rules }];
    const reply = await this.callInTime(calls, Date.now());
    checkReply(reply, calls);
    return op === 'refund' ? undefined : new ReplyReader(reply).decisions(rules);
  }

  /**
   * Sends a batch the batcher closed: as one script call, or on a Cluster one per node. Not if its deadline has passed
   * already (it waited behind heavy batches, see RedisCallBatcher): Redis would only refuse it.
   */
  private dispatch(calls: PendingCall[], landed: () => void): void {
    if (this.timeoutMs !== undefined && Date.now() - calls[0].madeAt >= this.timeoutMs) {
      landed();
      const error = new RateLimitDeadlineError({ message: 'The rate-limit command was not sent: its deadline passed while it waited for earlier ones; nothing was recorded' });
      for (const call of calls) call.reject(error);
      return;
    }
    if (this.port.isCluster && calls.length > 1) void this.dispatchByNode(calls).finally(landed);
    else void this.settle(calls, () => this.callInTime(calls, calls[0].madeAt), landed);
  }

  /**
   * Runs a batch and hands each call its part of the reply; a batch that fails fails each of its calls. `landed`
   * (the batcher's) is told first.
   */
  private async settle(calls: PendingCall[], send: () => Promise<ScriptReply>, landed?: () => void): Promise<void> {
    let reply: ScriptReply;
    try {
      reply = await send();
    } catch (error) {
      landed?.();
      for (const call of calls) call.reject(error);
      return;
    }
    landed?.();
    try {
      checkReply(reply, calls);
    } catch (error) {
      for (const call of calls) call.reject(error);
      return;
    }
    const read = new ReplyReader(reply);
    for (const call of calls) {
      if (call.op === 'refund' || call.op === 'return') call.resolve(undefined);
      else if (call.op === 'lease') call.resolve(read.grant(call.rules[0]));
      else call.resolve(call.single ? read.decision(call.rules[0]) : read.decisions(call.rules));
    }
  }

  /**
   * On a Cluster, one script call per node that serves the batch's keys (by the client's slot table). A call
   * whose node is unknown (slots not loaded yet) goes alone, through the client's own routing.
   */
  private async dispatchByNode(calls: PendingCall[]): Promise<void> {
    const byNode = new Map<string, PendingCall[]>();
    const sent: Promise<void>[] = [];
    for (const call of calls) {
      const node = this.crossSlot ? this.port.nodeOf(calculateSlot(call.rules[0].keys.state)) : undefined;
      if (node === undefined) {
        sent.push(this.settle([call], () => this.callInTime([call], call.madeAt)));
        continue;
      }
      const group = byNode.get(node);
      if (group) group.push(call);
      else byNode.set(node, [call]);
    }
    for (const group of byNode.values()) {
      sent.push(group.length === 1 ? this.settle(group, () => this.callInTime(group, group[0].madeAt)) : this.sendToNode(group));
    }
    await Promise.all(sent);
  }

  /**
   * One node's calls in one cross-slot script call. If it did not run there (a slot moved: MOVED, ASK, or a key
   * the script found on another node, replying { -2 } before writing anything; or a server without Redis 7's
   * script flags), each call is sent on its own, in order, so that ioredis follows redirections one key at a time
   * and a slot migration stays exact.
   */
  private async sendToNode(calls: PendingCall[]): Promise<void> {
    let reply: ScriptReply | undefined;
    try {
      reply = await this.callInTime(calls, calls[0].madeAt, true);
    } catch (error) {
      if (!(error instanceof Error) || !SEND_ONE_BY_ONE.test(error.message)) {
        for (const call of calls) call.reject(error);
        return;
      }
      if (/Unexpected flag|shebang|Error compiling script/i.test(error.message)) this.crossSlot = false;
    }
    if (reply && !(reply.length === 1 && reply[0] === NOT_HERE)) {
      await this.settle(calls, () => Promise.resolve(reply));
      return;
    }
    for (const call of calls) await this.settle([call], () => this.callInTime([call], call.madeAt));
  }

  /**
   * `call`, with its deadline kept: a `{-1}` reply (Redis ran the script after the deadline, recording nothing)
   * throws `RateLimitDeadlineError`, unless it came back within `timeoutMs`. Then the command was not late: Redis's
   * clock had stepped ahead of our estimate of it (NTP, a failover to a host whose clock is ahead), which would
   * fail every call until the next measurement a minute later. So the clocks are measured again at once, and the
   * batch is sent once more with what is left of the caller's wait, if anything is. The deadline counts from
   * `madeAt` (Date.now() of the batch's first call), when the callers started waiting.
   */
  private async callInTime(calls: readonly ScriptCall[], madeAt: number, crossSlot = false): Promise<ScriptReply> {
    const sentAt = performance.now();
    let reply = await this.call(calls, this.timeoutMs, madeAt, crossSlot);
    // A lone call's packed admission comes alone, not in a list (lua/includes/driver.lua).
    if (typeof reply === 'number') return [reply];
    if (!isLate(reply)) return reply;
    let roundTripMs = performance.now() - sentAt;
    const timeoutMs = this.timeoutMs;
    if (timeoutMs !== undefined && roundTripMs < timeoutMs) {
      await this.redisClock.measureAfter(sentAt);
      // What is left of the callers' wait, which began at madeAt: a batch held behind others was sent later than that.
      const leftMs = timeoutMs - (Date.now() - madeAt);
      if (leftMs >= 1) {
        const resentAt = performance.now();
        reply = await this.call(calls, leftMs, Date.now(), crossSlot);
        if (typeof reply === 'number') return [reply];
        if (!isLate(reply)) return reply;
        roundTripMs = performance.now() - resentAt;
      }
    }
    throw new RateLimitDeadlineError({ roundTripMs, timeoutMs });
  }

  private call(calls: readonly ScriptCall[], waitMs: number | undefined, since: number, crossSlot: boolean): Promise<number | ScriptReply> {
    const { keys, argv } = encodeBatch(calls, [this.clock ? Math.floor(this.clock() * 1000) : '', this.redisClock.deadline(waitMs, since)], crossSlot);
    if (crossSlot) return this.send(CROSS_SLOT, keys, argv);
    const first = calls[0].rules[0].definition;
    const same = calls.every((c) => c.rules.every((r) => r.definition === first));
    return this.send(same ? first.script : COMBINED, keys, argv);
  }

  /** The script call, resent as EVAL after a NOSCRIPT (redis-script.call.ts); it carries the same deadline. */
  private send(script: string, keys: string[], argv: (string | number)[]): Promise<number | ScriptReply> {
    this.corker?.cork();
    return this.port.runScript<number | ScriptReply>(this.scripts.get(script)!, keys, argv);
  }

  /** On a Cluster, rules of different trackers can live on different nodes, where no script can reach both. */
  private spansSlots(rules: PlannedRule[]): boolean {
    if (!this.port.isCluster || rules.length < 2) return false;
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
      let decision: Decision;
      try {
        [decision] = (await this.decide('consume', [rules[i]])).decisions;
      } catch (error) {
        // Nobody will be told the earlier rules admitted: give their units back before failing.
        await this.giveBack(rules.slice(0, i), (error as Error).message);
        throw error;
      }
      decisions.push(decision);
      if (!decision.allowed) {
        await this.giveBack(rules.slice(0, i), `rule "${rules[i].rule.name}" refused`);
        const rest = await Promise.all(rules.slice(i + 1).map(async (r) => (await this.decide('peek', [r])).decisions[0]));
        return { allowed: false, decisions: [...decisions, ...rest] };
      }
    }
    return { allowed: true, decisions };
  }

  /**
   * Refunds rules consumed by `consumeInOrder` for a call that was not admitted. A refund that fails (or reached
   * Redis after its deadline, recording nothing) leaves units counted that nobody was admitted for: that is the
   * store failing, and it is thrown, once every refund has been tried, so the failure policy decides.
   */
  private async giveBack(consumed: PlannedRule[], why: string): Promise<void> {
    const settled = await Promise.allSettled(consumed.map((r) => this.run('refund', [r])));
    const failed = settled.flatMap((s, i) => (s.status === 'rejected' ? [{ rule: consumed[i].rule.name, error: s.reason as Error }] : []));
    if (failed.length === 0) return;
    const message =
      `consumeAll across Cluster slots: ${why}, and giving back what rule(s) ${failed.map((f) => `"${f.rule}"`).join(', ')} ` +
      `had taken failed (${failed[0].error.message}); those units stay counted until their window passes`;
    if (failed.every((f) => f.error instanceof RateLimitDeadlineError)) throw new RateLimitDeadlineError({ message });
    throw new Error(message, { cause: failed[0].error });
  }
}

/** The scripts' `{-1}`: run after the deadline, nothing recorded. */
function isLate(reply: ScriptReply): boolean {
  return reply.length === 1 && reply[0] === -1;
}
