import type { RedisClientPort } from './clients/redis-client.port.js';

// How often the estimate of Redis's clock against ours is refreshed.
const CLOCK_SYNC_MS = 60_000;
/**
 * How far Redis's clock may be from ours before it is measured, in ms: a deadline sent meanwhile is that much later.
 * ntpd steps a clock that is 128 ms off (its step threshold), so two hosts it keeps are within about 2 × 128 ms. A
 * Redis clock further behind lets a command late by the difference through, until the first measurement (one round
 * trip after start-up); one further ahead refuses the command promptly, and RedisStore then measures and resends.
 */
export const UNMEASURED_SKEW_MS = 250;
/** A measurement's round trip within this of twice the shortest seen counts as precise, in ms. */
const PRECISE_SLACK_MS = 5;
/** Measurements rejected in a row as imprecise before one is taken anyway (the link itself may have got slower). */
const MAX_REJECTED = 2;

/**
 * Redis's clock against ours, measured with `TIME` at start-up and every minute (and at once when a prompt deadline
 * refusal says it moved), so that a script can carry a deadline in Redis's own clock: a command that reaches Redis
 * after the caller gave up on it writes nothing.
 */
export class RedisClockOffset {
  /** Redis's clock minus ours, in µs, plus the measurement's uncertainty (half its round trip). */
  private offsetUs?: number;
  private syncedAt = -Infinity;
  private syncing?: Promise<void>;
  /** When (performance.now()) the measurement in `syncing` started. */
  private syncStartedAt = -Infinity;
  /** The shortest round trip of a measurement, in ms. */
  private minRttMs = Infinity;
  private rejected = 0;
  /** Measure on the next call, however recent the last measurement. */
  private stale = false;
  /** The estimate is known to be wrong (a prompt deadline refusal): the next measurement is taken however imprecise. */
  private wrong = false;

  constructor(private readonly port: RedisClientPort) {}

  /**
   * Measures now, unless the client is not connected yet and connects only when asked (`lazyConnect`): a command
   * would open its connection. Then the first call measures.
   */
  start(): void {
    if (!this.port.connectsOnFirstCommand) void this.measure();
  }

  /**
   * The deadline ARGV: `since` + `waitMs` (ms, our clock) in Redis's µs. Before the first measurement, our own clock
   * plus `UNMEASURED_SKEW_MS`: no command goes without a deadline.
   */
  deadline(waitMs: number | undefined, since: number): number | '' {
    if (waitMs === undefined) return '';
    if ((this.stale || Date.now() - this.syncedAt > CLOCK_SYNC_MS) && !this.syncing) void this.measure();
    if (this.offsetUs === undefined) return Math.floor((since + waitMs + UNMEASURED_SKEW_MS) * 1000);
    return Math.floor((since + waitMs) * 1000 + this.offsetUs);
  }

  /**
   * A measurement started after `since` (performance.now()): the one in flight if it did, else a new one. Called
   * when Redis refused a prompt command as late: the estimate is wrong, so this measurement is kept even if its round
   * trip was slow (a loaded host), which the regular ones would set aside, and the next call measures again.
   */
  measureAfter(since: number): Promise<void> {
    this.wrong = true;
    return this.syncing && this.syncStartedAt >= since ? this.syncing : this.measure();
  }

  private measure(): Promise<void> {
    this.syncStartedAt = performance.now();
    this.stale = false;
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
      const rttMs = after - before;
      // Erring late by up to the round trip keeps a prompt command from being refused, but lets one through that is
      // late by as much: a round trip stretched by a stall or a queue (TIME behind a long script) would stretch every
      // deadline for a minute. Such a measurement is set aside and the next call measures again; a first one, or one
      // taken because a refusal proved the estimate wrong, is kept (nothing better is known) and the next call measures
      // again.
      const precise = rttMs <= 2 * this.minRttMs + PRECISE_SLACK_MS;
      if (!precise && this.offsetUs !== undefined && this.rejected < MAX_REJECTED && !this.wrong) {
        this.rejected++;
        this.stale = true;
        return;
      }
      this.rejected = 0;
      this.stale = (this.offsetUs === undefined && rttMs > PRECISE_SLACK_MS) || (this.wrong && !precise);
      this.wrong = false;
      this.minRttMs = Math.min(this.minRttMs, rttMs);
      const redisUs = Number(seconds) * 1_000_000 + Number(micros);
      this.offsetUs = redisUs - ((before + after) / 2) * 1000 + ((after - before) / 2) * 1000;
      this.syncedAt = after;
    } catch {
      // Redis is unavailable: keep the previous estimate, if any, until it is a minute old; without one, measure again
      // on the next call.
      if (this.offsetUs === undefined) this.stale = true;
    }
  }
}
