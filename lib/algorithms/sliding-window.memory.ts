import { answer, expiryAfter, floorTo, type AlgorithmRule, type CheckResult, type MemoryAlgorithm } from './algorithm.interface.js';

/** Twin of lua/sliding-window.lua: the hash becomes a Map from cell start (µs) to count. */
type Cells = Map<number, number>;

/** The start of the cell `now` falls in, and of the oldest cell still inside the window. */
function currentCell(r: AlgorithmRule, now: number): number {
  return floorTo(now, r.window / r.param);
}

/** Drops the cells that left the window; returns what the live ones hold. */
function dropExpired(cells: Cells, r: AlgorithmRule, current: number): number {
  const firstLive = current - r.window + r.window / r.param;
  let total = 0;
  for (const [start, count] of cells) {
    if (start < firstLive) cells.delete(start);
    else total += count;
  }
  return total;
}

/** The newest live cell's start (the cells are live: dropExpired ran), or undefined when there is none. */
function newestCell(cells: Cells): number | undefined {
  let newest: number | undefined;
  for (const start of cells.keys()) if (newest === undefined || start > newest) newest = start;
  return newest;
}

/** The live cells' starts, oldest first. */
function startsAscending(cells: Cells): number[] {
  return [...cells.keys()].sort((a, b) => a - b);
}

export const slidingWindowMemory: MemoryAlgorithm<Cells> = {
  check(entry, r, now, cost, apply, out) {
    const cells = entry.value;
    const current = currentCell(r, now);
    const total = cells === undefined ? 0 : dropExpired(cells, r, current);
    // Like Redis, which deletes a hash once its last field is gone.
    if (cells !== undefined && cells.size === 0) entry.value = undefined;
    const held = entry.value;
    let newest = held === undefined ? undefined : newestCell(held);
    if (total + cost <= r.limit) {
      if (cost === 0) return answer(out, true, r.limit - total, newest === undefined ? 0 : newest + r.window - now, 0);
      newest = Math.max(current, newest ?? current);
      if (apply) {
        const live = held ?? new Map<number, number>();
        live.set(current, (live.get(current) ?? 0) + cost);
        entry.value = live;
        entry.expiresAt = expiryAfter(now, newest + r.window - now);
      }
      return answer(out, true, r.limit - total - cost, newest + r.window - now, 0);
    }
    // More than the limit in force (an override's, cut below the cost): no wait lets it through.
    if (cost > r.limit) return answer(out, false, r.limit - total, newest === undefined ? 0 : newest + r.window - now, -1);
    return refused(out, held ?? new Map<number, number>(), r, now, total, cost, newest as number);
  },
  refund(entry, r, now, cost) {
    const cells = entry.value;
    if (!cells) return;
    dropExpired(cells, r, currentCell(r, now));
    const starts = startsAscending(cells);
    for (let i = starts.length - 1; i >= 0 && cost > 0; i--) {
      const count = cells.get(starts[i])!;
      const take = Math.min(cost, count);
      if (take === count) cells.delete(starts[i]);
      else cells.set(starts[i], count - take);
      cost -= take;
    }
    if (cells.size === 0) entry.value = undefined;
  },
};

/** A refusal: the wait is until enough of the oldest cells have left the window to make room for `cost`. */
function refused(out: CheckResult, cells: Cells, r: AlgorithmRule, now: number, total: number, cost: number, newest: number): CheckResult {
  let freed = 0;
  for (const start of startsAscending(cells)) {
    freed += cells.get(start)!;
    if (freed >= total + cost - r.limit) return answer(out, false, r.limit - total, newest + r.window - now, start + r.window - now);
  }
  return answer(out, false, r.limit - total, newest + r.window - now, newest + r.window - now);
}
