/** The primary store did not answer within `timeoutMs`. */
export class RateLimitTimeoutError extends Error {
  constructor(timeoutMs: number) {
    super(`The rate-limit store did not answer within ${timeoutMs} ms`);
    this.name = 'RateLimitTimeoutError';
  }
}

/**
 * Settles as `promise` does, or rejects with `RateLimitTimeoutError` after `ms`. Shared by the decision store and
 * the lease store, which both bound every call to the primary store by `timeoutMs`.
 */
export function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  // One promise and one timer per call: this wraps every decision.
  return new Promise<T>((resolve, reject) => {
    // Timers run before I/O in Node's event loop: after the loop was blocked for longer than `ms`, the reply may
    // already be waiting in the socket. Giving up only after the next I/O phase lets a reply Redis sent in time
    // win; giving up on it would leave counted in Redis a request the failure policy decided (and counted) too.
    const timer = setTimeout(() => setImmediate(() => reject(new RateLimitTimeoutError(ms))), ms);
    // A call we gave up on settles later into a promise already settled: no unhandled rejection.
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}
