// Counts admissions per window of a fixed-window rule from what each admission witnessed independently: the Redis TIME
// read before its call and after it (the script ran between the two). Used by the multi-process test of waiting calls
// (test/redis/wait-to-consume-processes.spec.ts) and by test/bench/acquire.bench.mjs.

/**
 * Places each admission in a window of `windowMs` (fixed windows aligned on the epoch, as the fixed-window script's)
 * that its [beforeUs, afterUs] bracket reaches, filling windows up to `limit` before overflowing: admissions sorted by
 * their last possible window, each put in the earliest one not yet full. That finds a placement within the limit
 * whenever one exists, so `max > limit` means the admissions cannot have kept to it. An admission whose bracket lies in
 * one window (all of them, unless a call straddled a window's end) has one place: its count is exact.
 * Returns { counts: Map<window index, admissions>, max, straddling: admissions whose bracket crossed a window's end }.
 */
export function countPerWindow(brackets, windowMs, limit) {
  const w = windowMs * 1000;
  const spans = brackets.map(({ beforeUs, afterUs }) => ({ first: Math.floor(beforeUs / w), last: Math.floor(afterUs / w) }));
  spans.sort((a, b) => a.last - b.last || a.first - b.first);
  const counts = new Map();
  let straddling = 0;
  for (const { first, last } of spans) {
    if (last > first) straddling++;
    let window = first;
    while (window < last && (counts.get(window) ?? 0) >= limit) window++;
    counts.set(window, (counts.get(window) ?? 0) + 1);
  }
  return { counts, max: Math.max(0, ...counts.values()), straddling };
}

/** Parses the witness list: one "beforeUs afterUs" line per admission. */
export function parseBrackets(lines) {
  return lines.map((line) => {
    const [beforeUs, afterUs] = line.split(' ').map(Number);
    return { beforeUs, afterUs };
  });
}

/**
 * Ordering across processes, from each call's [arrivedMs, servedMs] (one machine, one wall clock): `overtakes`, the
 * most calls that arrived after one call and were served before it; and the longest wait over the mean wait.
 */
export function fairness(calls) {
  const byArrival = [...calls].sort((a, b) => a[0] - b[0]);
  let overtakes = 0;
  for (let i = 0; i < byArrival.length; i++) {
    let later = 0;
    for (let j = i + 1; j < byArrival.length; j++) if (byArrival[j][0] > byArrival[i][0] && byArrival[j][1] < byArrival[i][1]) later++;
    overtakes = Math.max(overtakes, later);
  }
  const waits = calls.map(([arrived, served]) => served - arrived);
  const mean = waits.reduce((a, b) => a + b, 0) / Math.max(1, waits.length);
  const longest = Math.max(0, ...waits);
  return { overtakes, meanWaitMs: mean, maxWaitMs: longest, maxOverMean: mean > 0 ? longest / mean : 0 };
}
