// Arrival traces for the accuracy bench, and the measures taken on what a limiter admitted from them.
// Times are in ms from the start of the trace; whole ms, so an injected clock replays them exactly.

import { mulberry32 } from './load.mjs';

/** Constant rate of `factor` x the limit: what a well-behaved but over-eager client sends. */
export function steadyTrace({ limit, windowMs, windows, factor = 1.5 }) {
  const gap = windowMs / (limit * factor);
  const times = [];
  for (let i = 0; ; i++) {
    const t = Math.round(i * gap);
    if (t >= windows * windowMs) return times;
    times.push(t);
  }
}

/**
 * The boundary attack, every 3 windows: one request at the start of a window (so the peers' windows, which open
 * at a key's first request, open on the same boundaries as our epoch-aligned fixed windows), then `limit`
 * requests in the last `edgeMs` of that window and `limit` more in the first `edgeMs` of the next. The third
 * window is idle, so every key's state has expired before the next cycle.
 */
export function burstyTrace({ limit, windowMs, windows, edgeMs = 50 }) {
  const times = [];
  const step = edgeMs / limit;
  for (let cycle = 0; cycle + 2 <= windows; cycle += 3) {
    const start = cycle * windowMs;
    const boundary = start + windowMs;
    times.push(start);
    for (let i = 0; i < limit; i++) times.push(Math.round(boundary - edgeMs + i * step));
    for (let i = 0; i < limit; i++) times.push(Math.round(boundary + i * step));
  }
  return times;
}

/** Poisson arrivals at `factor` x the limit on average (exponential gaps, seeded), rounded to whole ms. */
export function poissonTrace({ limit, windowMs, windows, factor = 2, seed = 0xacc }) {
  const random = mulberry32(seed);
  const meanGap = windowMs / (limit * factor);
  const times = [];
  for (let t = 0; ; ) {
    t += -Math.log(1 - random()) * meanGap;
    if (t >= windows * windowMs) return times;
    times.push(Math.round(t));
  }
}

/** The most admitted times (sorted) inside any half-open interval [t, t + spanMs): the true sliding-window peak. */
export function maxInSpan(times, spanMs) {
  let best = 0;
  let j = 0;
  for (let i = 0; i < times.length; i++) {
    if (j < i) j = i;
    while (j < times.length && times[j] < times[i] + spanMs) j++;
    best = Math.max(best, j - i);
  }
  return best;
}

/**
 * Admitted count in the trailing window (t - windowMs, t], sampled every `stepMs` from 0 to `endMs`: the
 * points of the accuracy chart.
 */
export function rollingCounts(times, windowMs, endMs, stepMs = 10) {
  const points = [];
  let lo = 0;
  let hi = 0;
  for (let t = 0; t <= endMs; t += stepMs) {
    while (hi < times.length && times[hi] <= t) hi++;
    while (lo < hi && times[lo] <= t - windowMs) lo++;
    points.push([t, hi - lo]);
  }
  return points;
}
