/** The circuit breaker's state: `'open'` sends nothing to the store, `'half-open'` lets one probe through. */
export type CircuitState = 'closed' | 'open' | 'half-open';

export interface CircuitBreakerOptions {
  /** Consecutive failures that open the circuit. @default 3 */
  failureThreshold?: number;
  /** First open interval, in ms; doubled on each failed probe. @default 500 */
  minOpenMs?: number;
  /** Longest open interval, in ms. @default 30000 */
  maxOpenMs?: number;
}
