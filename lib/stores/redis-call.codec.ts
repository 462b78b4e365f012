import type { Decision, MultiDecision } from '../interfaces/decision.interface.js';
import type { RateLimitRule } from '../interfaces/rule.interface.js';
import { toDecision, type PlannedRule, type StoreOp } from './store.plan.js';

/** One store call as the scripts decide it: an operation on the rules of one request (see lua/includes/driver.lua). */
export interface ScriptCall {
  op: StoreOp;
  rules: PlannedRule[];
}

// The algorithms whose rules carry a parameter in ARGV: those the Lua registers with `param = true`.
const TAKES_PARAM: ReadonlySet<string> = new Set(['sw', 'tb', 'gcra']);
const HEAD: Readonly<Record<StoreOp, string>> = { consume: 'c', peek: 'p', refund: 'r' };
/** `c1`, `c2`, ...: the argument of a 1-unit consume of one rule, the call a batch is mostly made of, built once. */
const CONSUME_ONE: string[] = [];

/**
 * Builds one script call's KEYS and ARGV in the driver's layout (lua/includes/driver.lua): each rule's definition
 * once per batch, each call one short argument naming its definitions and costs, a lockout key only for a rule with
 * a lockout, a parameter only for an algorithm that has one.
 */
export function encodeBatch(calls: readonly ScriptCall[], head: readonly [now: string | number, deadline: string | number], crossSlot: boolean): { keys: string[]; argv: (string | number)[] } {
  const keys: string[] = [];
  // A Cluster batch: KEYS holds the first call's keys (one slot: they route the batch), the others go last in ARGV.
  const others: string[] = crossSlot ? [] : keys;
  const argv: (string | number)[] = [head[0], head[1], calls.length, 0, 0];
  const refs = new Map<RateLimitRule, number>();
  const definitions: (string | number)[] = [];
  for (let c = 0; c < calls.length; c++) {
    const { op, rules } = calls[c];
    const target = c === 0 ? keys : others;
    let spec = HEAD[op];
    for (let i = 0; i < rules.length; i++) {
      const r = rules[i];
      let ref = refs.get(r.rule);
      if (ref === undefined) {
        refs.set(r.rule, (ref = refs.size + 1));
        pushDefinition(r, definitions);
      }
      target.push(r.keys.state);
      if (r.rule.blockMs > 0) target.push(r.keys.block);
      if (rules.length === 1 && op === 'consume' && r.cost === 1) {
        spec = CONSUME_ONE[ref] ??= `c${ref}`;
      } else {
        spec += `${i === 0 ? '' : ','}${ref}${r.cost === 1 ? '' : `*${r.cost}`}`;
      }
    }
    argv.push(spec);
  }
  argv[3] = refs.size;
  for (let i = 0; i < definitions.length; i++) argv.push(definitions[i]);
  if (crossSlot) {
    argv[4] = others.length;
    for (let i = 0; i < others.length; i++) argv.push(others[i]);
  }
  return { keys, argv };
}

function pushDefinition(r: PlannedRule, out: (string | number)[]): void {
  const { tag } = r.definition;
  out.push(tag, r.rule.limit, r.rule.windowMs, lockoutArg(r.rule));
  if (TAKES_PARAM.has(tag)) out.push(r.definition.param(r.rule));
}

/** A rule's lockout as the driver reads it: ms, or 'base:factor:max:forgetAfter' for one that escalates (the factor as JS prints it, which Lua reads back to the same double). */
function lockoutArg(rule: RateLimitRule): number | string {
  return rule.lockoutFactor === undefined ? rule.blockMs : `${rule.blockMs}:${rule.lockoutFactor}:${rule.lockoutMaxMs}:${rule.lockoutForgetMs}`;
}

/** How many integers the script replies per rule of a consume or peek (see lua/includes/driver.lua). */
export const RULE_REPLY_WIDTH = 3;

/** How many integers the script replies for `call`: 3 per rule, none for a refund. */
export function replyWidth(call: ScriptCall): number {
  return call.op === 'refund' ? 0 : RULE_REPLY_WIDTH * call.rules.length;
}

/** Whether `reply` is what the script sends for `calls`, so that each call gets exactly its own numbers. */
export function checkReply(reply: unknown, calls: readonly ScriptCall[]): asserts reply is number[] {
  let width = 0;
  for (const call of calls) width += replyWidth(call);
  if (!Array.isArray(reply) || reply.length !== width || !reply.every(Number.isInteger)) {
    throw new Error(`Unexpected reply from the rate-limit script: ${JSON.stringify(reply)} (expected ${width} integers for ${calls.length} call(s))`);
  }
}

/**
 * The Decision of a one-rule consume or peek call, from its 3 integers starting at `at` in the batch's reply: remaining
 * (-1 - remaining when refused), reset after and retry after (ms).
 */
export function decodeDecision(rule: PlannedRule, reply: readonly number[], at: number): Decision {
  const status = reply[at];
  const limit = rule.definition.capacity(rule.rule);
  return status >= 0 ? toDecision(limit, true, status, reply[at + 1], reply[at + 2]) : toDecision(limit, false, -1 - status, reply[at + 1], reply[at + 2]);
}

/** The decisions of a consume or peek call, from its 3 integers per rule starting at `at` in the batch's reply. */
export function decodeDecisions(rules: readonly PlannedRule[], reply: readonly number[], at: number): MultiDecision {
  let allowed = true;
  const decisions = rules.map((r, i) => {
    const decision = decodeDecision(r, reply, at + RULE_REPLY_WIDTH * i);
    allowed &&= decision.allowed;
    return decision;
  });
  return { allowed, decisions };
}
