import type { Decision } from '../interfaces/decision.interface.js';
import type { RateLimitRule } from '../interfaces/rule.interface.js';

interface RefusalRecord {
  readonly rule: RateLimitRule;
  /** Whether the metrics have counted this refusal. */
  counted: boolean;
}

// Keyed by the decision object itself: whatever exception user code builds from it later, the rule and
// whether it was counted travel with it, and nothing outlives the decision.
const refusals = new WeakMap<Decision, RefusalRecord>();

/**
 * Remembers the rule of a refusal the module decided, and whether metrics counted it (consume, consumeAll,
 * enforce and the guard count their refusals; `peek` does not, since a peek may never reach a client).
 */
export function noteRefusal(decision: Decision, rule: RateLimitRule, counted: boolean): void {
  const known = refusals.get(decision);
  if (known) known.counted ||= counted;
  else refusals.set(decision, { rule, counted });
}

/** The rule behind a refusal the module decided; undefined for a decision it did not make. */
export function refusalRule(decision: Decision): RateLimitRule | undefined {
  return refusals.get(decision)?.rule;
}

/**
 * Marks a refusal counted and says whether it still had to be: true once per refusal, so a refusal that
 * reaches the client is counted exactly once wherever it was found.
 */
export function claimUncounted(decision: Decision, rule: RateLimitRule): boolean {
  const known = refusals.get(decision);
  if (known?.counted) return false;
  if (known) known.counted = true;
  else refusals.set(decision, { rule, counted: true });
  return true;
}
