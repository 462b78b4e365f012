/** Thrown for a cost that is not a positive integer, or that a rule can never admit. */
export class RateLimitCostError extends RangeError {
  constructor(message: string) {
    super(message);
    this.name = 'RateLimitCostError';
  }
}
