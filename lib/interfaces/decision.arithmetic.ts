import type { Decision } from './decision.interface.js';

/** `retryAfterMs` of a request's decisions: the longest wait among those that refused. */
export function longestWaitMs(decisions: readonly Decision[]): number {
  let wait = 0;
  for (const decision of decisions) {
    if (!decision.allowed) wait = Math.max(wait, waitMs(decision));
  }
  return wait;
}

/** A refusal's wait in ms; a request no wait lets through (retryAfterMs < 0) waits for the full reset. */
export function waitMs(decision: Decision): number {
  return decision.retryAfterMs < 0 ? decision.resetAfterMs : decision.retryAfterMs;
}
