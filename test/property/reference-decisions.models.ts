/**
 * Reference models that give the whole decision (allowed, remaining, resetAfterMs, retryAfterMs), written from the
 * algorithms' definitions rather than from the stores: lists of admitted events, waits found by trying the
 * instants at which something leaves the window (the first one where the request fits), and exact integer
 * arithmetic (BigInt, in units of 1/rate µs) for the token bucket and GCRA, where the stores reduce by a gcd.
 * Times are whole ms, as a ManualClock gives them; waits are reported in whole ms rounded up.
 */

/** What a store's Decision says, minus `degraded`. */
export interface ModelDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  resetAfterMs: number;
  retryAfterMs: number;
}

/** One algorithm's state for one tracker under one rule. */
export interface AlgorithmModel {
  /** The decision for `cost` units at `t` ms (cost 0: a look); records the units when `record` and admitted. */
  decide(t: number, cost: number, record: boolean): ModelDecision;
  /** Gives back `cost` units of what was taken (never more than there is). */
  refund(t: number, cost: number): void;
  /** The instant (ms) from which the stored state holds nothing, read without forgetting anything; undefined when nothing is stored. */
  expiresAt(): number | undefined;
}

const sum = (counts: number[]) => counts.reduce((a, b) => a + b, 0);

/** Windows [k·W, (k+1)·W) on the epoch; only the window last written is remembered (a clock that steps back into an earlier window starts it empty). */
export function fixedWindowModel(limit: number, windowMs: number): AlgorithmModel {
  let stored: { k: number; count: number } | undefined;
  const usedAt = (t: number) => (stored?.k === Math.floor(t / windowMs) ? stored.count : 0);
  return {
    decide(t, cost, record) {
      const k = Math.floor(t / windowMs);
      const used = usedAt(t);
      const windowEnd = (k + 1) * windowMs;
      if (used + cost > limit) return { allowed: false, limit, remaining: limit - used, resetAfterMs: windowEnd - t, retryAfterMs: windowEnd - t };
      if (record && cost > 0) stored = { k, count: used + cost };
      return { allowed: true, limit, remaining: limit - used - cost, resetAfterMs: used + cost === 0 ? 0 : windowEnd - t, retryAfterMs: 0 };
    },
    refund(t, cost) {
      if (stored && usedAt(t) > 0) stored.count -= Math.min(cost, stored.count);
    },
    expiresAt: () => (stored ? (stored.k + 1) * windowMs : undefined),
  };
}

/**
 * Every admitted unit is an event; an event at e counts at t while e > t - W, and once it has left the window it
 * is forgotten. Units are recorded at max(t, newest), so a clock stepping back never records out of order.
 */
export function slidingLogModel(limit: number, windowMs: number): AlgorithmModel {
  let events: number[] = [];
  const liveAt = (s: number) => events.filter((e) => e > s - windowMs).length;
  const emptyAfter = (t: number, times: number[]) => (times.length === 0 ? 0 : Math.max(...times) + windowMs - t);
  return {
    decide(t, cost, record) {
      events = events.filter((e) => e > t - windowMs);
      const used = events.length;
      if (used + cost <= limit) {
        const at = Math.max(t, ...events);
        const recorded = cost === 0 ? events : [...events, at];
        if (record) for (let i = 0; i < cost; i++) events.push(at);
        return { allowed: true, limit, remaining: limit - used - cost, resetAfterMs: emptyAfter(t, recorded), retryAfterMs: 0 };
      }
      const leaving = events.map((e) => e + windowMs).sort((a, b) => a - b);
      const passesAt = leaving.find((s) => s >= t && liveAt(s) + cost <= limit)!;
      return { allowed: false, limit, remaining: limit - used, resetAfterMs: emptyAfter(t, events), retryAfterMs: passesAt - t };
    },
    refund(_t, cost) {
      // The newest units are the ones a refunded request added.
      events.sort((a, b) => a - b).splice(Math.max(0, events.length - cost), cost);
    },
    expiresAt: () => (events.length === 0 ? undefined : Math.max(...events) + windowMs),
  };
}

/**
 * Cells of W/segments ms on the epoch; a cell counts at t while its start is later than t's cell start - W.
 * A cell that has left the window is forgotten.
 */
export function slidingWindowModel(limit: number, windowMs: number, segments: number): AlgorithmModel {
  const cellMs = windowMs / segments;
  let cells: { start: number; count: number }[] = [];
  const cellOf = (t: number) => t - (t % cellMs);
  const live = (s: number) => cells.filter((c) => c.start > cellOf(s) - windowMs);
  const emptyAfter = (t: number, starts: number[]) => (starts.length === 0 ? 0 : Math.max(...starts) + windowMs - t);
  return {
    decide(t, cost, record) {
      cells = live(t);
      const used = sum(cells.map((c) => c.count));
      const starts = cells.map((c) => c.start);
      if (used + cost <= limit) {
        const cell = cellOf(t);
        if (record && cost > 0) {
          const existing = cells.find((c) => c.start === cell);
          if (existing) existing.count += cost;
          else cells.push({ start: cell, count: cost });
        }
        return { allowed: true, limit, remaining: limit - used - cost, resetAfterMs: emptyAfter(t, cost === 0 ? starts : [...starts, cell]), retryAfterMs: 0 };
      }
      const leaving = starts.map((s) => s + windowMs).sort((a, b) => a - b);
      const passesAt = leaving.find((s) => s >= t && sum(live(s).map((c) => c.count)) + cost <= limit)!;
      return { allowed: false, limit, remaining: limit - used, resetAfterMs: emptyAfter(t, starts), retryAfterMs: passesAt - t };
    },
    refund(t, cost) {
      cells = live(t).sort((a, b) => b.start - a.start);
      for (const c of cells) {
        const take = Math.min(cost, c.count);
        c.count -= take;
        cost -= take;
      }
      cells = cells.filter((c) => c.count > 0);
    },
    expiresAt: () => (cells.length === 0 ? undefined : Math.max(...cells.map((c) => c.start)) + windowMs),
  };
}

/**
 * A bucket of `capacity` units, one unit back every window/rate µs, as virtual scheduling: the state is the
 * instant the bucket is full again, a unit moves it one interval later, and a request passes while that instant
 * stays within capacity intervals of now. A state found more than capacity intervals ahead (a clock stepping
 * back, a lowered capacity) is an empty bucket from now on. Time in units of 1/rate µs, so every interval is a
 * whole number of units: exact at any rate.
 */
function bucketModel(capacity: number, windowMs: number, rate: number): AlgorithmModel {
  const perMs = 1000n * BigInt(rate);
  const interval = BigInt(windowMs) * 1000n;
  const depth = BigInt(capacity) * interval;
  let fullAt: bigint | undefined;
  const ceilMs = (units: bigint) => Number((units + perMs - 1n) / perMs);
  const waitAhead = (now: bigint) => {
    if (fullAt === undefined || fullAt < now) return 0n;
    // More than an empty bucket's wait: the bucket is empty now, and refills from here.
    if (fullAt - now > depth) fullAt = now + depth;
    return fullAt - now;
  };
  return {
    decide(t, cost, record) {
      const now = BigInt(t) * perMs;
      const ahead = waitAhead(now);
      const after = ahead + BigInt(cost) * interval;
      if (after > depth) {
        return { allowed: false, limit: capacity, remaining: Number((depth - ahead) / interval), resetAfterMs: ceilMs(ahead), retryAfterMs: ceilMs(after - depth) };
      }
      if (record && cost > 0) fullAt = now + after;
      return { allowed: true, limit: capacity, remaining: Number((depth - after) / interval), resetAfterMs: ceilMs(after), retryAfterMs: 0 };
    },
    refund(t, cost) {
      const now = BigInt(t) * perMs;
      const left = waitAhead(now) - BigInt(cost) * interval;
      fullAt = left > 0n ? now + left : undefined;
    },
    expiresAt: () => (fullAt === undefined ? undefined : ceilMs(fullAt)),
  };
}

/** Token bucket: `limit` tokens, `refill` back per window. */
export function tokenBucketModel(limit: number, windowMs: number, refill: number): AlgorithmModel {
  return bucketModel(limit, windowMs, refill);
}

/** GCRA (redis-cell): emission interval period/count, `burst` (max_burst + 1) at once; the same machine as a bucket of `burst`. */
export function gcraModel(count: number, periodMs: number, burst: number): AlgorithmModel {
  return bucketModel(burst, periodMs, count);
}
