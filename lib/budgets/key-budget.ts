import type { BudgetGrant } from '../interfaces/budget.interface.js';
import type { Decision } from '../interfaces/decision.interface.js';

/** A key is taken ahead for once this instance asks at least this many units of it per `maxMs`. */
export const HOT_UNITS = 4;

/**
 * One tracker's local budget under one rule, in this instance: the units taken ahead and not spent yet, until when
 * they may be spent, and the rate they are asked for at (units per `maxMs`, this period and the last), which sizes
 * the next take. Times are on the budgets' clock, in ms.
 */
export class KeyBudget {
  /** Units taken and not spent. */
  units = 0;
  /** No unit of the current take may be spent from this instant (its window or cell ends, or `maxMs` passed). */
  spendUntil = 0;
  /** The store's ticket of the current take, which its give-back carries. */
  ticket = 0;
  /** Units the current take got: the next is asked for when fewer than half are left. */
  size = 0;
  /** A take is in flight. */
  taking = false;
  /** After a refused or failed take: none before this instant. */
  noTakeUntil = 0;
  /** The key was reset or its rule replaced: nothing more is spent from it, and what lands is given back. */
  discarded = false;
  /** What local decisions report: the take's limit, the store's remaining after it, and when the key's budget is full again. */
  limit = 0;
  remainingAtTake = 0;
  resetAt = 0;
  /** Gives the leftover back at `spendUntil` if nothing else did. */
  timer?: ReturnType<typeof setTimeout>;
  private asked = 0;
  private askedBefore = 0;
  private periodStart: number;

  constructor(now: number) {
    this.periodStart = now;
  }

  /** Counts `cost` units asked at `now`, in periods of `periodMs`. */
  meter(cost: number, now: number, periodMs: number): void {
    if (now - this.periodStart >= periodMs) {
      // A period with no request in it leaves nothing to go by.
      this.askedBefore = now - this.periodStart < 2 * periodMs ? this.asked : 0;
      this.asked = 0;
      this.periodStart = now;
    }
    this.asked += cost;
  }

  /** Units worth taking now: twice what this instance asks per period, up to `maxUnits`; 0 for a cold key. */
  want(maxUnits: number): number {
    const demand = Math.max(this.asked, this.askedBefore);
    return demand < HOT_UNITS ? 0 : Math.min(maxUnits, 2 * demand);
  }

  /** Whether `cost` units can be spent at `now`. */
  canSpend(cost: number, now: number): boolean {
    return this.units >= cost && now < this.spendUntil;
  }

  /** Spends `cost` units (canSpend said so) and returns the decision, as the store would report it with them unspent. */
  spend(cost: number, now: number): Decision {
    this.units -= cost;
    return { allowed: true, limit: this.limit, remaining: this.remainingAtTake + this.units, resetAfterMs: Math.max(0, Math.ceil(this.resetAt - now)), retryAfterMs: 0 };
  }

  /**
   * A take that got units, asked for at `askedAt`. Units left of the previous take join it when both count in the
   * same window (one ticket); the caller gives back a previous leftover this returns otherwise.
   */
  granted(grant: BudgetGrant, askedAt: number, maxMs: number): { units: number; ticket: number } | undefined {
    const until = askedAt + Math.min(maxMs, grant.spendWithinMs ?? Infinity);
    let leftover: { units: number; ticket: number } | undefined;
    if (this.units > 0 && this.ticket === grant.ticket) {
      this.units += grant.units;
    } else {
      if (this.units > 0) leftover = { units: this.units, ticket: this.ticket };
      this.units = grant.units;
    }
    this.ticket = grant.ticket;
    this.spendUntil = until;
    this.size = grant.units;
    this.limit = grant.decision.limit;
    this.remainingAtTake = grant.decision.remaining;
    this.resetAt = askedAt + grant.decision.resetAfterMs;
    return leftover;
  }
}
