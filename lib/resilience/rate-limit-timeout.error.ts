/** The primary store did not answer within `timeoutMs` (the bound is a DeadlineQueue, deadline.queue.ts). */
export class RateLimitTimeoutError extends Error {
  constructor(timeoutMs: number) {
    super(`The rate-limit store did not answer within ${timeoutMs} ms`);
    this.name = 'RateLimitTimeoutError';
  }
}
