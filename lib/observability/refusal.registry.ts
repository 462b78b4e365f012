import type { Decision } from '../interfaces/decision.interface.js';
import type { RateLimitRule } from '../interfaces/rule.interface.js';

interface RefusalRecord {
  readonly rule: RateLimitRule;
  /** Whether the metrics have counted this refusal. */
  counted: boolean;
}

/** A base class whose constructor returns the object it is given: `new` then adds a subclass's fields to that object. */
class Stamp {
  constructor(target: object) {
    return target as Stamp;
  }
}

/**
 * The record travels on the decision object itself, in a private field: whatever exception user code builds
 * from it later, the rule and whether it was counted travel with it, and nothing outlives the decision. A
 * private field is invisible to spread, JSON, `Object.keys` and test equality, and adding one costs a few
 * nanoseconds where a WeakMap entry cost about 0.7 µs and an ephemeron for the garbage collector to trace
 * (in a flood, every request is a refusal).
 */
class RefusalField extends Stamp {
  #refusal: RefusalRecord;

  private constructor(decision: Decision, record: RefusalRecord) {
    super(decision);
    this.#refusal = record;
  }

  static get(decision: Decision): RefusalRecord | undefined {
    return #refusal in decision ? (decision as unknown as RefusalField).#refusal : unstampable.get(decision);
  }

  static set(decision: Decision, record: RefusalRecord): void {
    // A decision that takes no new property (a custom store's frozen objects) may not take a field either.
    if (Object.isExtensible(decision)) new RefusalField(decision, record);
    else unstampable.set(decision, record);
  }
}

// Frozen or sealed decisions: rare, so the WeakMap's cost is too.
const unstampable = new WeakMap<Decision, RefusalRecord>();

/**
 * Remembers the rule of a refusal the module decided, and whether metrics counted it (consume, consumeAll,
 * enforce and the guard count their refusals; `peek` does not, since a peek may never reach a client).
 */
export function noteRefusal(decision: Decision, rule: RateLimitRule, counted: boolean): void {
  const known = RefusalField.get(decision);
  if (known) known.counted ||= counted;
  else RefusalField.set(decision, { rule, counted });
}

/** The rule behind a refusal the module decided; undefined for a decision it did not make. */
export function refusalRule(decision: Decision): RateLimitRule | undefined {
  return RefusalField.get(decision)?.rule;
}

/**
 * Marks a refusal counted and says whether it still had to be: true once per refusal, so a refusal that
 * reaches the client is counted exactly once wherever it was found.
 */
export function claimUncounted(decision: Decision, rule: RateLimitRule): boolean {
  const known = RefusalField.get(decision);
  if (known?.counted) return false;
  if (known) known.counted = true;
  else RefusalField.set(decision, { rule, counted: true });
  return true;
}
