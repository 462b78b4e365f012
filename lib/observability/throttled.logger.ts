import type { LoggerService } from '@nestjs/common';

/**
 * Logs a recurring error once per interval, with the count of those it held back: a Redis outage fails every
 * request, and one log line per request would bury everything else.
 */
export class ThrottledLog {
  private lastAt = -Infinity;
  private suppressed = 0;

  constructor(
    private readonly logger: Pick<LoggerService, 'error' | 'warn'>,
    private readonly intervalMs = 10_000,
    private readonly clock: () => number = () => performance.now(),
  ) {}

  error(message: string): void {
    const now = this.clock();
    if (now - this.lastAt < this.intervalMs) {
      this.suppressed++;
      return;
    }
    const held = this.suppressed ? ` (${this.suppressed} more since the last report)` : '';
    this.lastAt = now;
    this.suppressed = 0;
    this.logger.error(`${message}${held}`);
  }
}
