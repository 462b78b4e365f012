import type { OpenTelemetryAttributes as Attributes, OpenTelemetryTrace } from '../interfaces/open-telemetry.interface.js';
import type { Decision, MultiDecision } from '../interfaces/decision.interface.js';
import { waitMs } from '../interfaces/decision.arithmetic.js';
import type { RateLimitRule } from '../interfaces/rule.interface.js';
import type { RuleKey } from '../interfaces/store.interface.js';
import { decisionResult } from './decision.result.js';

/**
 * Sets each decision on the span active when it is made, as `ratelimit.*` attributes: the deciding rule, its
 * algorithm and result, whether the request was admitted, whether the failure policy decided, whether a shadow
 * rule refused; with several rules, every rule's name and result too. Never the key, the tracker or the IP.
 */
export class DecisionSpans {
  // A one-rule decision's attributes depend only on its rule and five flags: made once, set as they are (the
  // SDK copies them). Keyed by the rule object, which a configuration reload replaces.
  private readonly single = new WeakMap<RateLimitRule, Attributes[]>();

  constructor(private readonly trace: OpenTelemetryTrace) {}

  /** `shadowRefused`: a shadow rule refused (the request was not refused for it). */
  record(entries: readonly RuleKey[], result: MultiDecision, shadowRefused: boolean): void {
    const span = this.trace.getActiveSpan();
    if (span === undefined || !span.isRecording()) return;
    // `allowed` is the request's: a shadow rule's refusal admits it.
    const shadow = shadowRefused && result.allowed;
    span.setAttributes(entries.length === 1 ? this.oneRule(entries[0].rule, result.decisions[0], result.allowed, shadow) : severalRules(entries, result, shadow));
  }

  private oneRule(rule: RateLimitRule, d: Decision, allowed: boolean, shadow: boolean): Attributes {
    let variants = this.single.get(rule);
    if (!variants) this.single.set(rule, (variants = []));
    const index = (allowed ? 1 : 0) | (shadow ? 2 : 0) | (d.allowed ? 4 : 0) | (d.degraded ? 8 : 0) | (d.shadow ? 16 : 0);
    return (variants[index] ??= attributes(rule, d, allowed, d.degraded !== undefined, shadow));
  }
}

function severalRules(entries: readonly RuleKey[], result: MultiDecision, shadow: boolean): Attributes {
  const { decisions } = result;
  const i = decidingIndex(decisions, result.allowed);
  return {
    ...attributes(entries[i].rule, decisions[i], result.allowed, decisions.some((d) => d.degraded !== undefined), shadow),
    'ratelimit.rules': entries.map((e) => e.rule.name),
    'ratelimit.results': decisions.map(decisionResult),
  };
}

function attributes(rule: RateLimitRule, d: Decision, allowed: boolean, degraded: boolean, shadow: boolean): Attributes {
  return {
    'ratelimit.rule': rule.name,
    'ratelimit.algorithm': rule.algorithm,
    'ratelimit.result': decisionResult(d),
    'ratelimit.allowed': allowed,
    'ratelimit.degraded': degraded,
    'ratelimit.shadow': shadow,
  };
}

/**
 * The rule that decided a request of several, picked as the headers pick theirs (http/rate-limit.headers.ts, a layer
 * above): refused, the refusing rule in force that makes the client wait longest; admitted while a shadow rule
 * refused, that shadow rule (the longest wait); admitted, the rule with least left.
 */
export function decidingIndex(decisions: readonly Decision[], allowed: boolean): number {
  let best = -1;
  for (let i = 0; i < decisions.length; i++) {
    const d = decisions[i];
    if (d.allowed || (allowed && !d.shadow) || (!allowed && d.shadow)) continue;
    if (best < 0 || waitMs(d) > waitMs(decisions[best])) best = i;
  }
  if (best >= 0) return best;
  best = 0;
  for (let i = 1; i < decisions.length; i++) if (decisions[i].remaining < decisions[best].remaining) best = i;
  return best;
}
