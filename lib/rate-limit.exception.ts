import { HttpException, HttpStatus } from '@nestjs/common';
import type { Decision } from './interfaces/decision.interface.js';

/** The 429 body. */
export interface RateLimitExceededBody {
  statusCode: 429;
  message: string;
  /** Seconds (rounded up) before the same request can pass. */
  retryAfter: number;
}

/** Thrown when a rule refuses: 429 with `{ statusCode, message, retryAfter }`; carries the decisions. */
export class RateLimitExceededException extends HttpException {
  constructor(
    message = 'Too Many Requests',
    /** Milliseconds before the same request can pass. */
    readonly retryAfterMs = 0,
    /** Every rule's decision for the refused request. */
    readonly decisions: readonly Decision[] = [],
  ) {
    const body: RateLimitExceededBody = { statusCode: HttpStatus.TOO_MANY_REQUESTS, message, retryAfter: Math.ceil(retryAfterMs / 1000) };
    super(body, HttpStatus.TOO_MANY_REQUESTS);
  }
}
