import type { MultiDecision } from '../interfaces/decision.interface.js';
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

/**
 * Appends a call's keys and ARGV in the driver's layout: only what it reads (a lockout key only for a rule with a
 * lockout, a parameter only for an algorithm that has one), so that the common call is 2 + 5 arguments.
 */
export function encodeCall(call: ScriptCall, keys: string[], argv: (string | number)[]): void {
  const { rules } = call;
  argv.push(rules.length === 1 ? HEAD[call.op] : `${HEAD[call.op]}${rules.length}`);
  for (const r of rules) {
    keys.push(r.keys.state);
    if (r.rule.blockMs > 0) keys.push(r.keys.block);
    const { tag } = r.definition;
    argv.push(tag, r.rule.limit, r.rule.windowMs, lockoutArg(r.rule));
    if (TAKES_PARAM.has(tag)) argv.push(r.params.param);
    argv.push(r.cost);
  }
}

/** A rule's lockout as the driver reads it: ms, or 'base:factor:max:forgetAfter' for one that escalates (the factor as JS prints it, which Lua reads back to the same double). */
function lockoutArg(rule: RateLimitRule): number | string {
  return rule.lockoutFactor === undefined ? rule.blockMs : `${rule.blockMs}:${rule.lockoutFactor}:${rule.lockoutMaxMs}:${rule.lockoutForgetMs}`;
}

/** How many integers the script replies for `call`: 4 per rule, none for a refund. */
export function replyWidth(call: ScriptCall): number {
  return call.op === 'refund' ? 0 : 4 * call.rules.length;
}

/** Whether `reply` is what the script sends for `calls`, so that each call gets exactly its own numbers. */
export function checkReply(reply: unknown, calls: readonly ScriptCall[]): asserts reply is number[] {
  let width = 0;
  for (const call of calls) width += replyWidth(call);
  if (!Array.isArray(reply) || reply.length !== width || !reply.every(Number.isInteger)) {
    throw new Error(`Unexpected reply from the rate-limit script: ${JSON.stringify(reply)} (expected ${width} integers for ${calls.length} call(s))`);
  }
}

/** The decisions of a consume or peek call, from its 4 integers per rule starting at `at` in the batch's reply. */
export function decodeDecisions(rules: readonly PlannedRule[], reply: readonly number[], at: number): MultiDecision {
  let allowed = true;
  const decisions = rules.map((r, i) => {
    const o = at + 4 * i;
    allowed &&= reply[o] === 1;
    return toDecision(r, reply[o] === 1, reply[o + 1], reply[o + 2], reply[o + 3]);
  });
  return { allowed, decisions };
}
