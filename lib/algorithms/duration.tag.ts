/** Units a duration tag may end in, largest first, in µs. */
const UNITS: ReadonlyArray<readonly [us: number, suffix: string]> = [
  [86_400_000_000, 'd'],
  [3_600_000_000, 'h'],
  [60_000_000, 'm'],
  [1_000_000, 's'],
  [1_000, 'ms'],
];

/**
 * A whole number of µs as it appears in a state key's tag: in the largest of d, h, m, s, ms that divides it, else
 * in µs without a unit (`1h`, `36s`, `3600ms`, `1500`). Short, so that a key's name stays within the allocation
 * of a peer's name without parameters (Redis 7.0 on jemalloc: 32 bytes for any name of 15-30, see
 * test/bench/results/memory.md); one text per duration and one duration per text, so a change of the duration
 * always changes the key. Tags of µs alone read as the tags before units did.
 */
export function durationTag(us: number): string {
  for (const [unit, suffix] of UNITS) {
    if (us % unit === 0) return `${us / unit}${suffix}`;
  }
  return String(us);
}
