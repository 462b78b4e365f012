import type { Decision, MultiDecision } from '../interfaces/decision.interface.js';
import type { RateLimitRule } from '../interfaces/rule.interface.js';
import type { RateLimitStore, RuleKey } from '../interfaces/store.interface.js';

/** Whether a request has a shadow rule: the one check a request of rules in force pays for shadow mode. */
export function hasShadowRules(entries: readonly RuleKey[]): boolean {
  for (let i = 0; i < entries.length; i++) if (entries[i].shadow) return true;
  return false;
}

const NONE_IN_FORCE: MultiDecision = Object.freeze({ allowed: true, decisions: [] });

/**
 * Decides a request that has shadow rules. The rules in force decide first, all-or-nothing in one store call
 * (`decideInForce`), exactly as they would without the shadow rules; only if they admit (or there are none)
 * does each shadow rule decide, on its own: one `consume` each, issued together (a coalescing Redis store sends
 * them in one script call), so that one shadow rule's refusal neither refuses the request nor keeps the others
 * from charging. The request's `allowed` is the rules in force's answer; a shadow rule's decision keeps what it
 * decided, marked `shadow: true`. When a rule in force refuses, the shadow rules are not asked: a refused
 * request charges nothing anywhere, and their decisions say so (`shadowNotAsked`).
 */
export async function decideWithShadowRules(
  entries: readonly RuleKey[],
  defaultCost: number,
  decideInForce: (inForce: readonly RuleKey[]) => Promise<MultiDecision>,
  store: RateLimitStore,
): Promise<MultiDecision> {
  const inForce = entries.filter((e) => !e.shadow);
  const enforced = inForce.length > 0 ? await decideInForce(inForce) : NONE_IN_FORCE;
  const shadows = enforced.allowed ? await Promise.all(entries.filter((e) => e.shadow).map((e) => store.consume(e.key, e.rule, e.cost ?? defaultCost))) : undefined;
  const decisions = new Array<Decision>(entries.length);
  for (let i = 0, f = 0, s = 0; i < entries.length; i++) {
    decisions[i] = !entries[i].shadow ? enforced.decisions[f++] : shadows ? asShadow(shadows[s++]) : shadowNotAsked(entries[i].rule);
  }
  return { allowed: enforced.allowed, decisions };
}

/** A shadow rule's decision, marked so that callers, the observer and the guard tell it from a rule in force. */
export function asShadow(decision: Decision): Decision {
  return { ...decision, shadow: true };
}

/**
 * A shadow rule of a request a rule in force refused: it was not asked, so nothing was charged and nothing is
 * counted (as a rule in force that would have admitted). It reports its full budget, having decided nothing.
 */
export function shadowNotAsked(rule: RateLimitRule): Decision {
  return { allowed: true, limit: rule.burst, remaining: rule.burst, resetAfterMs: 0, retryAfterMs: 0, shadow: true };
}
