import type { RedisClientPort } from './redis/clients/redis-client.port.js';

// How often the estimate of Redis's clock against ours is refreshed.
const CLOCK_SYNC_MS = 60_000;

/**
 * Redis's clock against ours, measured with `TIME` every minute (and at once when a prompt deadline refusal says
 * it moved), so that a script can carry a deadline in Redis's own clock: a command that reaches Redis after the
 * caller gave up on it writes nothing.
 */
export class RedisClockOffset {
  /** Redis's clock minus ours, in µs, plus the measurement's uncertainty (half its round trip). */
  private offsetUs?: number;
  private syncedAt = -Infinity;
  private syncing?: Promise<void>;
  /** When (performance.now()) the measurement in `syncing` started. */
  private syncStartedAt = -Infinity;

  constructor(private readonly port: RedisClientPort) {}

  /** The deadline ARGV: `since` + `waitMs` (ms, our clock) in Redis's µs, once that clock has been measured; '' before. */
  deadline(waitMs: number | undefined, since: number): number | '' {
    if (waitMs === undefined) return '';
    if (Date.now() - this.syncedAt > CLOCK_SYNC_MS && !this.syncing) void this.measure();
    return this.offsetUs === undefined ? '' : Math.floor((since + waitMs) * 1000 + this.offsetUs);
  }

  /** A measurement started after `since` (performance.now()): the one in flight if it did, else a new one. */
  measureAfter(since: number): Promise<void> {
    return this.syncing && this.syncStartedAt >= since ? this.syncing : this.measure();
  }

  private measure(): Promise<void> {
    this.syncStartedAt = performance.now();
    const syncing: Promise<void> = this.sync().finally(() => {
      if (this.syncing === syncing) this.syncing = undefined;
    });
    this.syncing = syncing;
    return syncing;
  }

  private async sync(): Promise<void> {
    try {
      const before = Date.now();
      const [seconds, micros] = await this.port.time();
      const after = Date.now();
      const redisUs = Number(seconds) * 1_000_000 + Number(micros);
      // Erring late by the round trip's half only lets a command through that the caller may have just given up on.
      this.offsetUs = redisUs - ((before + after) / 2) * 1000 + ((after - before) / 2) * 1000;
      this.syncedAt = after;
    } catch {
      // Redis is unavailable: keep the previous estimate, try again on a later call.
    }
  }
}
