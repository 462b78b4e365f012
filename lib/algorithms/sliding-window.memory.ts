import { answer, expiryAfter, floorTo, type AlgorithmRule, type CheckResult, type MemoryAlgorithm } from './algorithm.interface.js';

/**
 * Twin of lua/sliding-window.lua: the hash becomes one array of its cells, oldest first, two numbers each: the
 * cell's start (µs) and its count. V8 keeps an array of numbers unboxed, where a Map keyed by starts past 2^31 made
 * a heap number of each key it was given.
 */
type Cells = number[];

/** The start of the cell `now` falls in, and of the oldest cell still inside the window. */
function currentCell(r: AlgorithmRule, now: number): number {
  return floorTo(now, r.window / r.param);
}

/** Drops the cells that left the window, in place; returns what the live ones hold. */
function dropExpired(cells: Cells, r: AlgorithmRule, current: number): number {
  const firstLive = current - r.window + r.window / r.param;
  let total = 0;
  let kept = 0;
  for (let i = 0; i < cells.length; i += 2) {
    const start = cells[i];
    const count = cells[i + 1];
    if (start < firstLive) continue;
    cells[kept] = start;
    cells[kept + 1] = count;
    kept += 2;
    total += count;
  }
  // Setting length is a call into V8's runtime: only when a cell went.
  if (kept !== cells.length) cells.length = kept;
  return total;
}

/** Counts `cost` in the cell starting at `start`, keeping the cells in order (a clock that stepped back counts in an older one). */
function addToCell(cells: Cells, start: number, cost: number): void {
  let i = cells.length - 2;
  while (i >= 0 && cells[i] > start) i -= 2;
  if (i >= 0 && cells[i] === start) cells[i + 1] += cost;
  else if (i === cells.length - 2) cells.push(start, cost);
  else cells.splice(i + 2, 0, start, cost);
}

export const slidingWindowMemory: MemoryAlgorithm<Cells> = {
  check(entry, r, now, cost, apply, out) {
    const cells = entry.value;
    const current = currentCell(r, now);
    const total = cells === undefined ? 0 : dropExpired(cells, r, current);
    // Like Redis, which deletes a hash once its last field is gone.
    if (cells !== undefined && cells.length === 0) entry.value = undefined;
    const held = entry.value;
    // The cells are in order: the newest is the last.
    let newest = held === undefined ? undefined : held[held.length - 2];
    if (total + cost <= r.limit) {
      if (cost === 0) return answer(out, true, r.limit - total, newest === undefined ? 0 : newest + r.window - now, 0);
      newest = Math.max(current, newest ?? current);
      if (apply) {
        const live = held ?? [];
        addToCell(live, current, cost);
        entry.value = live;
        entry.expiresAt = expiryAfter(now, newest + r.window - now);
      }
      return answer(out, true, r.limit - total - cost, newest + r.window - now, 0);
    }
    // More than the limit in force (an override's, cut below the cost): no wait lets it through.
    if (cost > r.limit) return answer(out, false, r.limit - total, newest === undefined ? 0 : newest + r.window - now, -1);
    return refused(out, held ?? [], r, now, total, cost, newest as number);
  },
  refund(entry, r, now, cost) {
    const cells = entry.value;
    if (!cells) return;
    dropExpired(cells, r, currentCell(r, now));
    // From the newest cell back: the cells it empties are the last ones, dropped together.
    let end = cells.length;
    for (let i = cells.length - 2; i >= 0 && cost > 0; i -= 2) {
      const held = cells[i + 1];
      const take = Math.min(cost, held);
      if (take === held) end = i;
      else cells[i + 1] = held - take;
      cost -= take;
    }
    if (end !== cells.length) cells.length = end;
    if (end === 0) entry.value = undefined;
  },
};

/** A refusal: the wait is until enough of the oldest cells have left the window to make room for `cost`. */
function refused(out: CheckResult, cells: Cells, r: AlgorithmRule, now: number, total: number, cost: number, newest: number): CheckResult {
  let freed = 0;
  for (let i = 0; i < cells.length; i += 2) {
    freed += cells[i + 1];
    if (freed >= total + cost - r.limit) return answer(out, false, r.limit - total, newest + r.window - now, cells[i] + r.window - now);
  }
  return answer(out, false, r.limit - total, newest + r.window - now, newest + r.window - now);
}
