/**
 * Reference models, written the obvious way (lists of admitted events, floating point where natural), to check
 * the stores against. Times in ms; each returns whether a request of `cost` at `t` is admitted, and records it.
 */
export type Model = (t: number, cost: number) => boolean;

/** Exact sliding window: admitted units in (t - window, t] plus cost must fit the limit. */
export function exactSlidingLog(limit: number, windowMs: number): Model {
  const events: { t: number; cost: number }[] = [];
  let last = -Infinity;
  return (t, cost) => {
    const at = Math.max(t, last);
    const used = events.filter((e) => e.t > t - windowMs).reduce((sum, e) => sum + e.cost, 0);
    if (used + cost > limit) return false;
    events.push({ t: at, cost });
    last = at;
    return true;
  };
}

/** Cells of window/segments, keyed by their start; the last `segments` cells count. */
export function cellWindow(limit: number, windowMs: number, segments: number): Model {
  const cell = windowMs / segments;
  const events: { cellStart: number; cost: number }[] = [];
  return (t, cost) => {
    const current = Math.floor(t / cell) * cell;
    const used = events.filter((e) => e.cellStart > current - windowMs).reduce((sum, e) => sum + e.cost, 0);
    if (used + cost > limit) return false;
    events.push({ cellStart: current, cost });
    return true;
  };
}

/** Windows [k·window, (k+1)·window). */
export function alignedFixedWindow(limit: number, windowMs: number): Model {
  const counts = new Map<number, number>();
  return (t, cost) => {
    const k = Math.floor(t / windowMs);
    const used = counts.get(k) ?? 0;
    if (used + cost > limit) return false;
    counts.set(k, used + cost);
    return true;
  };
}

/** Tokens as a real number, refilled by elapsed time × rate, capped at capacity (GCRA is the same machine). */
export function tokenBucket(capacity: number, refill: number, windowMs: number): Model {
  const perToken = windowMs / refill;
  let tokens = capacity;
  let last = -Infinity;
  return (t, cost) => {
    if (last > -Infinity && t > last) tokens = Math.min(capacity, tokens + (t - last) / perToken);
    last = Math.max(last, t);
    // A millionth of a token of slack: the stores count time in whole microseconds.
    if (tokens + 1e-6 < cost) return false;
    tokens -= cost;
    return true;
  };
}
