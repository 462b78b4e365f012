import { HttpException, HttpStatus } from '@nestjs/common';
import type { RuleOutcome } from './rate-limit.headers.js';
import type { Decision } from '../interfaces/decision.interface.js';
import type { RateLimitErrorDetail } from '../interfaces/rate-limit-error-detail.interface.js';
import type { RateLimitRule } from '../interfaces/rule.interface.js';
import { refusalRule } from '../observability/refusal.registry.js';

/** The 429 body. */
export interface RateLimitExceededBody {
  statusCode: 429;
  message: string;
  /** Seconds (rounded up) before the same request can pass. */
  retryAfter: number;
}

/**
 * Thrown when a rule refuses: 429 with `{ statusCode, message, retryAfter }`; carries the decisions (and their
 * rules). Wherever it is thrown (guard, `enforce`, or user code after `peek` / `consumeAll`), the module's
 * exception filter answers it over HTTP with `Retry-After` and the rate-limit headers of its rules.
 */
export class RateLimitExceededException extends HttpException {
  /** The rule of each decision, in the same order; empty when the thrower gave none. */
  readonly rules: readonly RateLimitRule[];

  constructor(
    message = 'Too Many Requests',
    /** Milliseconds before the same request can pass. */
    readonly retryAfterMs = 0,
    /** Every rule's decision for the refused request. */
    readonly decisions: readonly Decision[] = [],
    /** The rule of each decision (e.g. `service.rule('login-ip')`); optional for decisions the service returned. */
    rules: readonly RateLimitRule[] = [],
  ) {
    if (rules.length > 0 && rules.length !== decisions.length) {
      throw new RangeError(`RateLimitExceededException: rules has ${rules.length} entries but decisions has ${decisions.length}; give one rule per decision, in the same order, or none`);
    }
    const body: RateLimitExceededBody = { statusCode: HttpStatus.TOO_MANY_REQUESTS, message, retryAfter: Math.ceil(retryAfterMs / 1000) };
    super(body, HttpStatus.TOO_MANY_REQUESTS);
    this.rules = rules;
  }

  /**
   * Each decision with its rule: every one when the rules were given; otherwise the refusals the module decided
   * (`peek`, `consume`, `consumeAll` remember their rule), since a bare decision does not name its rule.
   */
  get outcomes(): RuleOutcome[] {
    if (this.rules.length > 0) return this.decisions.map((decision, i) => ({ rule: this.rules[i], decision }));
    const outcomes: RuleOutcome[] = [];
    for (const decision of this.decisions) {
      const rule = decision.allowed ? undefined : refusalRule(decision);
      if (rule) outcomes.push({ rule, decision });
    }
    return outcomes;
  }
}

/** What `errorMessage` receives about a refusing rule: `totalHits` counts the refused request's units too, as throttler's does. */
export function errorDetail({ rule, decision, cost = 1 }: RuleOutcome): RateLimitErrorDetail {
  const used = Math.max(0, decision.limit - decision.remaining);
  return { ...decision, rule: rule.name, used, totalHits: used + cost };
}
