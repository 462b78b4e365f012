import type { RateLimitSettings } from '../interfaces/rate-limit-settings.interface.js';
import type { Decision, MultiDecision } from '../interfaces/decision.interface.js';
import type { RateLimitDecisionEvent } from '../interfaces/rate-limit-options.interface.js';
import type { RateLimitRule } from '../interfaces/rule.interface.js';
import type { RuleKey } from '../interfaces/store.interface.js';
import { NO_METRICS } from './rate-limit.metrics.js';
import type { RateLimitMetrics } from '../interfaces/metrics.interface.js';
import { noteRefusal } from './refusal.registry.js';
import type { RejectionAudit } from './rejection.audit.js';
import type { DecisionSpans } from './decision.spans.js';
import { decisionResult } from './decision.result.js';

/** `performance`, read once: the global is a getter in Node 20, which cost a decision about 400 instructions per read. */
const perf = performance;

/**
 * The memory store's decisions timed for the duration metric: one in this many (hooks still get every duration).
 * Two clock reads cost more than the rest of such a decision.
 */
export const MEMORY_DURATION_SAMPLE = 16;

/** Tells metrics, the audit trail, the active span and the user's hooks about every decision the module makes. */
export class DecisionObserver {
  /**
   * Whether anyone reads a decision's duration (the metrics or a hook): when not, `start()` returns 0 and
   * neither end of the decision reads the clock.
   */
  readonly timed: boolean;
  /** Decisions timed: every one, or one in `sampleEvery` when only the duration metric reads it (see the constructor). */
  private readonly sampleEvery: number;
  /** Decisions untimed since the last one timed. */
  private untimed: number;

  /**
   * `sampleEvery`: when only the metrics read the duration (no onDecision / onRejected hook), time one decision in
   * this many, the first included (the memory store's, which cost less than the two clock reads): the duration
   * histogram then holds a sample of them. Hooks, when set, get every decision's duration.
   */
  constructor(
    private readonly settings: Pick<RateLimitSettings, 'onDecision' | 'onRejected'>,
    private readonly metrics?: RateLimitMetrics,
    private readonly audit?: RejectionAudit | null,
    /** OpenTelemetry span attributes, when on (chosen here once: off, `observe` has no step for them). */
    spans?: DecisionSpans,
    sampleEvery = 1,
  ) {
    const hooked = settings.onDecision !== undefined || settings.onRejected !== undefined;
    this.timed = (metrics !== undefined && metrics !== NO_METRICS) || hooked;
    this.sampleEvery = hooked ? 1 : sampleEvery;
    // The first decision is timed, so that the duration metric has a point from the start.
    this.untimed = this.sampleEvery - 1;
    if (spans) this.observe = traced(this.observe, spans);
  }

  /**
   * The `started` to pass to `observe`: performance.now() when this decision's duration is read, else 0 (no clock
   * read, and no duration recorded).
   */
  start(): number {
    if (!this.timed) return 0;
    if (this.sampleEvery > 1) {
      if (++this.untimed < this.sampleEvery) return 0;
      this.untimed = 0;
    }
    return perf.now();
  }

  /**
   * Metrics, span attributes, hooks and the audit trail, for every decision the module makes. `defaultCost`: the
   * units of an entry that names none (the call's `cost`), for the utilisation of a refused request. `started`:
   * from `start()`, once per request (the duration is the request's, whatever its number of rules); 0: not timed.
   */
  observe(entries: readonly RuleKey[], result: MultiDecision, started: number, fromBlockCache: boolean, defaultCost = 1): void {
    const { onDecision, onRejected } = this.settings;
    const durationMs = started > 0 ? perf.now() - started : 0;
    const metrics = this.metrics;
    // Whether a shadow rule refused: the request was admitted all the same, but hooks and the audit hear of it.
    let shadowRefused = false;
    for (let i = 0; i < entries.length; i++) {
      const d = result.decisions[i];
      // A rule that would have admitted a request another rule refused decided nothing: it is not counted.
      if (!result.allowed && d.allowed) continue;
      if (!d.allowed) {
        if (d.shadow) shadowRefused = true;
        // Counted here, so that the exception filter does not count it again when the client receives it.
        else noteRefusal(d, entries[i].rule, true);
      }
      metrics?.decision(entries[i].rule.name, decisionResult(d));
      // Utilisation is the store's measure of the window: the block cache's repeats replay an old answer, and
      // 'open' / 'closed' decisions were made up by the failure policy without a window ('memory' has one).
      if (metrics?.utilization && !fromBlockCache && d.degraded !== 'open' && d.degraded !== 'closed' && d.limit > 0) {
        const used = d.limit - d.remaining + (d.allowed ? 0 : (entries[i].cost ?? defaultCost));
        metrics.utilization(entries[i].rule.name, used / d.limit);
      }
    }
    if (started > 0) metrics?.duration(durationMs / 1000);
    // The store's refusal is recorded; the cache's repeats of it would cost a Redis write each, in a flood.
    const refused = !result.allowed || shadowRefused;
    if (refused && this.audit && !fromBlockCache) {
      result.decisions.forEach((d, i) => {
        if (!d.allowed) this.audit!.record({ rule: entries[i].rule.name, key: entries[i].key, retryAfterMs: d.retryAfterMs, degraded: d.degraded, ...(d.shadow ? { shadow: true } : {}) });
      });
    }
    if (onDecision || (onRejected && refused)) {
      const event: RateLimitDecisionEvent = {
        entries: entries.map((e) => ({ key: e.key, rule: e.rule.name })),
        result,
        durationMs,
        fromBlockCache,
        ...(result.allowed && shadowRefused ? { shadow: true as const } : {}),
      };
      onDecision?.(event);
      if (refused) onRejected?.(event);
    }
  }

  /**
   * A peek records nothing and counts nothing: it may only be a question ("how many attempts are left?"). Its
   * refusal is remembered, so that if user code answers a client with it, the exception filter counts it once.
   */
  peeked(rule: RateLimitRule, decision: Decision): Decision {
    if (!decision.allowed) noteRefusal(decision, rule, false);
    return decision;
  }
}

/**
 * `observe` with the decision's span attributes first, for a module with OpenTelemetry's spans on; off, the
 * observer keeps its own `observe`, with no step for them.
 */
function traced(observe: DecisionObserver['observe'], spans: DecisionSpans): DecisionObserver['observe'] {
  return function (this: DecisionObserver, entries, result, started, fromBlockCache, defaultCost) {
    // Whether a shadow rule refused (the request was not refused for it), as `observe` finds it.
    let shadowRefused = false;
    for (let i = 0; i < result.decisions.length; i++) if (!result.decisions[i].allowed && result.decisions[i].shadow) shadowRefused = true;
    spans.record(entries, result, shadowRefused);
    observe.call(this, entries, result, started, fromBlockCache, defaultCost);
  };
}
