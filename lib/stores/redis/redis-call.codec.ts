import type { BudgetGrant } from '../../interfaces/budget.interface.js';
import type { Decision, MultiDecision } from '../../interfaces/decision.interface.js';
import type { RateLimitRule } from '../../interfaces/rule.interface.js';
import { ceilMs, toDecision, type PlannedRule, type StoreOp } from '../store.plan.js';

/** One store call as the scripts decide it: an operation on the rules of one request (see lua/includes/driver.lua). */
export interface ScriptCall {
  op: StoreOp;
  rules: PlannedRule[];
  /** A `return` (give-back) only: the take's end on the decisions' clock, in µs, past which nothing goes back (0 = none). */
  till?: number;
}

// The algorithms whose rules carry a parameter in ARGV: those the Lua registers with `param = true`.
const TAKES_PARAM: ReadonlySet<string> = new Set(['sw', 'tb', 'gcra']);
const HEAD: Readonly<Record<StoreOp, string>> = { consume: 'c', peek: 'p', refund: 'r', lease: 'l', return: 'g' };
/** `c1`, `c2`, ...: the argument of a 1-unit consume of one rule, the call a batch is mostly made of, built once. */
const CONSUME_ONE: string[] = [];

/** ARGV[1] and ARGV[2] of every script call: now (µs, or '' for Redis's TIME) and the deadline (µs, or '' for none). */
type ScriptHead = readonly [now: string | number, deadline: string | number];
/** One script call's KEYS and ARGV. */
interface EncodedCall {
  keys: string[];
  argv: (string | number)[];
}

/**
 * Builds one script call's KEYS and ARGV in the driver's layout (lua/includes/driver.lua): each rule's definition
 * once per batch, each call one short argument naming its definitions and costs (identical calls in a row one
 * argument, 'N:' and the call, or 'N=' and the call when they are all on one tracker's keys, sent once), a lockout
 * key only for a rule with a lockout, a parameter only for an algorithm that has one.
 */
export function encodeBatch(calls: readonly ScriptCall[], head: ScriptHead, crossSlot: boolean): EncodedCall {
  if (calls.length === 1 && !crossSlot) {
    const lone = encodeLone(calls[0], head);
    if (lone !== undefined) return lone;
  }
  const keys: string[] = [];
  // A Cluster batch: KEYS holds the first call's keys (one slot: they route the batch), the others go last in ARGV.
  const others: string[] = crossSlot ? [] : keys;
  const argv: (string | number)[] = [head[0], head[1], 0, 0, 0];
  const refs = new Map<RateLimitRule, number>();
  const definitions: string[] = [];
  // The current run of identical calls: its call argument, its length, and whether all its calls have one tracker's
  // keys (a hot key's: then sent once, 'N=' and the call); written out when a different call ends it.
  let run = '';
  let times = 0;
  let oneKey = false;
  const endRun = () => argv.push(times === 1 ? run : `${times}${oneKey ? '=' : ':'}${run}`);
  for (let c = 0; c < calls.length; c++) {
    const { op, rules } = calls[c];
    let spec = HEAD[op];
    for (let i = 0; i < rules.length; i++) {
      const r = rules[i];
      let ref = refs.get(r.rule);
      if (ref === undefined) {
        refs.set(r.rule, (ref = refs.size + 1));
        definitions.push(definitionArg(r));
      }
      if (rules.length === 1 && op === 'consume' && r.cost === 1) {
        spec = CONSUME_ONE[ref] ??= `c${ref}`;
      } else {
        spec += `${i === 0 ? '' : ','}${ref}${r.cost === 1 ? '' : `*${r.cost}`}`;
      }
    }
    if (op === 'return') spec += `@${calls[c].till ?? 0}`;
    // The same call as the one before (so of the same rules), on the same keys.
    const same = spec === run && sameKeys(calls[c - 1].rules, rules);
    if (spec === run && (times === 1 || same === oneKey)) {
      if (times++ === 1) oneKey = same;
      if (oneKey) continue;
    } else {
      if (times > 0) endRun();
      run = spec;
      times = 1;
      oneKey = false;
    }
    const target = c === 0 ? keys : others;
    for (let i = 0; i < rules.length; i++) {
      const r = rules[i];
      target.push(r.keys.state);
      if (r.rule.blockMs > 0) target.push(r.keys.block);
      if (r.keys.override !== undefined) target.push(r.keys.override);
    }
  }
  endRun();
  argv[2] = argv.length - 5;
  argv[3] = refs.size;
  for (let i = 0; i < definitions.length; i++) argv.push(definitions[i]);
  if (crossSlot) {
    argv[4] = others.length;
    for (let i = 0; i < others.length; i++) argv.push(others[i]);
  }
  return { keys, argv };
}

/**
 * Whether two calls of the same rules are on the same keys: a rule's keys follow from the rule and the tracker. The
 * trackers are compared, as given: the keys are strings built by concatenation, which V8 flattens to compare (2% of a
 * batched decision's app CPU where no two keys were the same).
 */
function sameKeys(a: readonly PlannedRule[], b: readonly PlannedRule[]): boolean {
  for (let i = 0; i < b.length; i++) if (a[i].tracker !== b[i].tracker) return false;
  return true;
}

/**
 * A lone call of one unit under one rule without a lockout, in the driver's short form: the operation in ARGV[3]
 * where a batch has its counts, then the rule's definition. Such a call is what every decision is with coalescing
 * off, and its three arguments fewer took 7,000 of the 91,500 Redis instructions of a token-bucket call (callgrind).
 */
function encodeLone(call: ScriptCall, head: ScriptHead): EncodedCall | undefined {
  if (call.rules.length !== 1) return undefined;
  const r = call.rules[0];
  if (r.cost !== 1 || r.rule.blockMs > 0 || r.rule.overrides || call.op === 'lease' || call.op === 'return') return undefined;
  return { keys: [r.keys.state], argv: [head[0], head[1], HEAD[call.op], definitionArg(r)] };
}

/** Each frozen rule's definition argument (a rule from defineRule is frozen: what the argument says never changes). */
const DEFINITION_ARGS = new WeakMap<RateLimitRule, string>();

/**
 * A rule's definition as the driver reads it, one argument, its fields joined by ',' (`sw,100,60000,0,10`): each
 * argument cost Redis about 1,100 instructions to take in.
 */
function definitionArg(r: PlannedRule): string {
  let arg = DEFINITION_ARGS.get(r.rule);
  if (arg === undefined) {
    const { tag } = r.definition;
    // An overridable rule's algorithm id ends in '+': its calls carry its override key (lua/includes/driver.lua).
    arg = `${r.rule.overrides ? `${tag}+` : tag},${r.rule.limit},${r.rule.windowMs},${lockoutArg(r.rule)}`;
    if (TAKES_PARAM.has(tag)) arg += `,${r.definition.param(r.rule)}`;
    if (Object.isFrozen(r.rule)) DEFINITION_ARGS.set(r.rule, arg);
  }
  return arg;
}

/**
 * A rule's lockout as the driver reads it: ms, or 'base:factor:max:forgetAfter' for one that escalates (the factor as
 * JS prints it, which Lua reads back to the same double); either followed by 'r' when its end restarts the count.
 */
function lockoutArg(rule: RateLimitRule): number | string {
  const length = rule.lockoutFactor === undefined ? rule.blockMs : `${rule.blockMs}:${rule.lockoutFactor}:${rule.lockoutMaxMs}:${rule.lockoutForgetMs}`;
  return rule.lockoutRestartsCount && rule.blockMs > 0 ? `${length}r` : length;
}

/**
 * A script's reply to a batch (see lua/includes/driver.lua), per rule of a consume or peek call: an admission packed in
 * one integer >= 0, remaining × (window µs + 1) + reset after (µs); an admission that does not pack, [remaining, reset
 * after]; a refusal, three integers, -1 - remaining, reset after (µs), retry after (µs). Nothing for a refund. As the
 * script sends it, an integer of 2^52 or more in magnitude is its digits (a Buffer: replies are not decoded);
 * `checkReply` turns those into numbers.
 */
export type ScriptReply = (number | [remaining: number, resetAfterUs: number])[];

/**
 * Whether `reply` is what the script sends for `calls` (see `ScriptReply`), so that each call gets exactly its own
 * numbers. Integers sent as digits are replaced by their numbers, in place.
 */
export function checkReply(reply: unknown, calls: readonly ScriptCall[]): asserts reply is ScriptReply {
  let at = 0;
  let valid = Array.isArray(reply);
  const elements = reply as unknown[];
  for (let c = 0; valid && c < calls.length; c++) {
    const { op } = calls[c];
    if (op === 'refund' || op === 'return') continue;
    // A take's decision comes after its end and that end less now.
    if (op === 'lease') {
      valid = wholeAt(elements, at) && wholeAt(elements, at + 1);
      at += 2;
    }
    for (let i = 0; valid && i < calls[c].rules.length; i++) {
      // An overridable rule's decision comes after the limit in force.
      if (calls[c].rules[i].rule.overrides) valid = wholeAt(elements, at++);
      const first = elements[at];
      if (Array.isArray(first)) {
        valid &&= first.length === 2 && wholeAt(first, 0) && wholeAt(first, 1);
        at += 1;
        continue;
      }
      valid &&= wholeAt(elements, at);
      const width = (elements[at] as number) >= 0 ? 1 : 3;
      for (let j = 1; j < width; j++) valid &&= wholeAt(elements, at + j);
      at += width;
    }
  }
  if (!valid || elements.length !== at) {
    throw new Error(`Unexpected reply from the rate-limit script: ${JSON.stringify(reply)} (expected per rule of ${calls.length} call(s) an integer, a pair or three integers)`);
  }
}

/** An integer the script sends as its digits: of 2^52 or more in magnitude, below 2^53 (see lua/includes/driver.lua). */
const DIGITS = /^-?\d{1,16}$/;

/**
 * Whether `list[i]` is an integer: a number, or the digits of one (a Buffer, or a string from a client that decodes
 * replies), which is replaced by its number. Number() of up to 16 digits is exact below 2^53.
 */
function wholeAt(list: unknown[], i: number): boolean {
  const value = list[i];
  if (Number.isInteger(value)) return true;
  if (!(Buffer.isBuffer(value) || typeof value === 'string')) return false;
  const digits = value.toString();
  if (!DIGITS.test(digits)) return false;
  const n = Number(digits);
  if (!Number.isSafeInteger(n)) return false;
  list[i] = n;
  return true;
}

/** Reads a checked reply (see `checkReply`) call by call, in the order of the batch's calls. */
export class ReplyReader {
  private at = 0;

  constructor(private readonly reply: ScriptReply) {}

  /** The Decision of a one-rule consume or peek call. */
  decision(rule: PlannedRule): Decision {
    const { reply } = this;
    // An overridable rule's decision comes after the limit in force (its override's, or its own).
    const limit = rule.rule.overrides ? (reply[this.at++] as number) : rule.definition.capacity(rule.rule);
    const at = this.at;
    const first = reply[at];
    // The script's waits are in µs (lua/includes/driver.lua): rounded up to ms here, as the memory store does.
    if (typeof first !== 'number') {
      this.at = at + 1;
      return toDecision(limit, true, first[0], ceilMs(first[1]), 0);
    }
    if (first >= 0) {
      this.at = at + 1;
      const base = rule.rule.windowMs * 1000 + 1;
      const reset = first % base;
      return toDecision(limit, true, (first - reset) / base, ceilMs(reset), 0);
    }
    this.at = at + 3;
    const retry = reply[at + 2] as number;
    return toDecision(limit, false, -1 - first, ceilMs(reply[at + 1] as number), retry < 0 ? -1 : ceilMs(retry));
  }

  /** What a take (`lease`) of one rule got: its end, then its decision (see `BudgetGrant`). */
  grant(rule: PlannedRule): BudgetGrant {
    const ticket = this.reply[this.at] as number;
    const leftUs = this.reply[this.at + 1] as number;
    this.at += 2;
    const decision = this.decision(rule);
    // Rounded down: spending a unit a fraction of a ms late would put it in the next window.
    return { decision, units: decision.allowed ? rule.cost : 0, spendWithinMs: ticket > 0 ? Math.floor(leftUs / 1000) : undefined, ticket };
  }

  /** The decisions of a consume or peek call of one rule or several. */
  decisions(rules: readonly PlannedRule[]): MultiDecision {
    let allowed = true;
    const decisions = rules.map((r) => {
      const decision = this.decision(r);
      allowed &&= decision.allowed;
      return decision;
    });
    return { allowed, decisions };
  }
}
