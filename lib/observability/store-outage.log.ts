import type { LoggerService } from '@nestjs/common';

/**
 * Says in one line when the store is back after an outage the module saw: an outage begins at the first sign of
 * one (the circuit opening, a connection error of a client the module created), and ends at the first sign that
 * decisions are on the store again (the circuit closing; the client reconnecting while the circuit is closed).
 * However many signs either way, the return is logged once, as going away was.
 */
export class StoreOutageLog {
  /** When the outage began (ms, `clock`); undefined while the store is up. */
  private since?: number;

  constructor(
    private readonly logger: Pick<LoggerService, 'log'>,
    private readonly clock: () => number = () => performance.now(),
  ) {}

  /** Whether an outage began and has not ended. */
  get ongoing(): boolean {
    return this.since !== undefined;
  }

  /** A sign the store is away; the first one begins the outage. */
  away(): void {
    this.since ??= this.clock();
  }

  /** A sign the store is back: ends the outage with one line, or does nothing when none is ongoing. */
  back(): void {
    if (this.since === undefined) return;
    const seconds = (this.clock() - this.since) / 1000;
    this.since = undefined;
    this.logger.log(`The rate-limit store is back after ${seconds.toFixed(1)} s: deciding on it again`);
  }
}
