/**
 * The primary store did not answer within `timeoutMs`. The bound itself is a DeadlineQueue (deadline.queue.ts); the
 * error stays in this module, from which the stores and the package's index import it.
 */
export class RateLimitTimeoutError extends Error {
  constructor(timeoutMs: number) {
    super(`The rate-limit store did not answer within ${timeoutMs} ms`);
    this.name = 'RateLimitTimeoutError';
  }
}
