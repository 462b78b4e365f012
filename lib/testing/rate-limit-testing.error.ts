/** Thrown by the testing kit when it is used where it must not be (production) or how it cannot work; the message says what to do. */
export class RateLimitTestingError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RateLimitTestingError';
  }
}
