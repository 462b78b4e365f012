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
 * decided, marked `shadow: true`. When a rule in force refuses, the shadow rules are not charged (a refused
 * request charges nothing anywhere): each is peeked instead, together, so that its decision reports what it holds
 * (`shadowHeld`), as the headers show it with `shadowHeaders`.
 */
export async function decideWithShadowRules(
  entries: readonly RuleKey[],
  defaultCost: number,
  decideInForce: (inForce: readonly RuleKey[]) => Promise<MultiDecision>,
  store: RateLimitStore,
): Promise<MultiDecision> {
  const inForce = entries.filter((e) => !e.shadow);
  const enforced = inForce.length > 0 ? await decideInForce(inForce) : NONE_IN_FORCE;
  const shadowEntries = entries.filter((e) => e.shadow);
  if (!enforced.allowed) {
    // A store that could not decide the rules in force (the failure policy did) would only make the client wait
    // for a peek as well: the shadow rules then report their placeholder.
    const degraded = enforced.decisions.some((d) => d.degraded);
    const held = await Promise.all(shadowEntries.map((e) => (degraded ? shadowNotAsked(e.rule) : peekHeld(store, e))));
    return { allowed: false, decisions: merged(entries, enforced.decisions, held) };
  }
  const shadows = await Promise.all(shadowEntries.map((e) => store.consume(e.key, e.rule, e.cost ?? defaultCost)));
  for (let s = 0; s < shadows.length; s++) shadows[s] = asShadow(shadows[s]);
  return { allowed: true, decisions: merged(entries, enforced.decisions, shadows) };
}

/** The decisions of the rules in force and of the shadow rules, back in the order of the entries. */
function merged(entries: readonly RuleKey[], inForce: readonly Decision[], shadows: readonly Decision[]): Decision[] {
  const decisions = new Array<Decision>(entries.length);
  for (let i = 0, f = 0, s = 0; i < entries.length; i++) decisions[i] = entries[i].shadow ? shadows[s++] : inForce[f++];
  return decisions;
}

/** What a shadow rule holds for a request refused by a rule in force; its placeholder when the store cannot say. */
function peekHeld(store: RateLimitStore, entry: RuleKey): Promise<Decision> {
  try {
    // 0 units: what is left now, not what a charge of the request's cost would leave (peek's `remaining`).
    // A shadow rule never changes a request's outcome: a peek that fails leaves the refusal as it was.
    return store.peek(entry.key, entry.rule, 0).then(
      (decision) => (decision.degraded ? shadowNotAsked(entry.rule) : shadowHeld(decision)),
      () => shadowNotAsked(entry.rule),
    );
  } catch {
    return Promise.resolve(shadowNotAsked(entry.rule));
  }
}

/** A shadow rule's decision, marked so that callers, the observer and the guard tell it from a rule in force. */
export function asShadow(decision: Decision): Decision {
  return { ...decision, shadow: true };
}

/**
 * A shadow rule of a request a rule in force refused, as peeked: what it holds (limit, remaining, reset). It was not
 * charged and decided nothing, so it refuses nothing and is not counted (as a rule in force that would have
 * admitted): `allowed: true`, no wait, even when it is spent, since its wait must never become the client's.
 */
export function shadowHeld(peeked: Decision): Decision {
  return { allowed: true, limit: peeked.limit, remaining: peeked.remaining, resetAfterMs: peeked.resetAfterMs, retryAfterMs: 0, shadow: true };
}

/**
 * A shadow rule of a request a rule in force refused, when the store could not say what it holds (its peek failed or
 * was decided by the failure policy, or the rules in force were): its full budget, as `shadowHeld` otherwise.
 */
export function shadowNotAsked(rule: RateLimitRule): Decision {
  return { allowed: true, limit: rule.burst, remaining: rule.burst, resetAfterMs: 0, retryAfterMs: 0, shadow: true };
}
