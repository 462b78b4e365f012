import { expiryAfter, type AlgorithmRule, type MemoryAlgorithm } from './algorithm.interface.js';

/** Twin of lua/sliding-window.lua: the hash becomes a Map from cell start (µs) to count. */
type Cells = Map<number, number>;

function liveCells(cells: Cells, r: AlgorithmRule, now: number): { live: [number, number][]; total: number; current: number } {
  const cell = r.window / r.param;
  const current = now - (now % cell);
  const firstLive = current - r.window + cell;
  const live: [number, number][] = [];
  let total = 0;
  for (const [start, count] of cells) {
    if (start < firstLive) {
      cells.delete(start);
    } else {
      live.push([start, count]);
      total += count;
    }
  }
  live.sort((a, b) => a[0] - b[0]);
  return { live, total, current };
}

export const slidingWindowMemory: MemoryAlgorithm<Cells> = {
  check(entry, r, now, cost, apply) {
    const cells = entry.value ?? new Map<number, number>();
    const { live, total, current } = liveCells(cells, r, now);
    // Like Redis, which deletes a hash once its last field is gone.
    if (cells.size === 0) entry.value = undefined;
    let newest = live.length > 0 ? live[live.length - 1][0] : undefined;
    if (total + cost <= r.limit) {
      if (cost === 0) return [true, r.limit - total, newest === undefined ? 0 : newest + r.window - now, 0];
      newest = Math.max(current, newest ?? current);
      if (apply) {
        cells.set(current, (cells.get(current) ?? 0) + cost);
        entry.value = cells;
        entry.expiresAt = expiryAfter(now, newest + r.window - now);
      }
      return [true, r.limit - total - cost, newest + r.window - now, 0];
    }
    let freed = 0;
    for (const [start, count] of live) {
      freed += count;
      if (freed >= total + cost - r.limit) return [false, r.limit - total, (newest as number) + r.window - now, start + r.window - now];
    }
    return [false, r.limit - total, (newest as number) + r.window - now, (newest as number) + r.window - now];
  },
  refund(entry, r, now, cost) {
    if (!entry.value) return;
    const { live } = liveCells(entry.value, r, now);
    for (let i = live.length - 1; i >= 0 && cost > 0; i--) {
      const [start, count] = live[i];
      const take = Math.min(cost, count);
      if (take === count) entry.value.delete(start);
      else entry.value.set(start, count - take);
      cost -= take;
    }
    if (entry.value.size === 0) entry.value = undefined;
  },
};
