// Closed-loop load: N workers, each issuing its next call as soon as the previous one settles.

/** Small seeded PRNG (mulberry32), so every case, and every run, sees the same sequence of keys. */
export function mulberry32(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * A fixed, uniformly random sequence of keys `k0`..`k<keyCount-1>`. `reset()` rewinds it, so each case starts
 * from the same position; `next()` wraps around after `length` picks.
 */
export function keySequence({ keyCount, length = 1 << 20, seed = 0x5eed }) {
  const random = mulberry32(seed);
  const names = Array.from({ length: keyCount }, (_, i) => `k${i}`);
  const order = new Uint32Array(length);
  for (let i = 0; i < length; i++) order[i] = Math.floor(random() * keyCount);
  let cursor = 0;
  return {
    reset() {
      cursor = 0;
    },
    next() {
      const key = names[order[cursor]];
      cursor = cursor + 1 === length ? 0 : cursor + 1;
      return key;
    },
  };
}

/** Latencies in ns, in a growable Float64Array (less GC churn than a JS array of a million numbers). */
export class LatencyRecorder {
  values = new Float64Array(1 << 18);
  count = 0;

  add(ns) {
    if (this.count === this.values.length) {
      const grown = new Float64Array(this.values.length * 2);
      grown.set(this.values);
      this.values = grown;
    }
    this.values[this.count++] = ns;
  }

  /** Nearest-rank percentiles, in ms. */
  percentilesMs(...ps) {
    const sorted = this.values.subarray(0, this.count).sort();
    return ps.map((p) => (this.count === 0 ? NaN : sorted[Math.max(0, Math.ceil(p * this.count) - 1)] / 1e6));
  }
}

/**
 * Runs `call(key)` from `concurrency` workers for `warmupMs` (not recorded), then `measureMs` (recorded): a call
 * counts if it completes inside the measured period. `call` resolves to true when the request was allowed, or to
 * `{ allowed, degraded }` (degraded: decided by the failure policy, not the store). By default the first error
 * any call throws rejects the run (after every worker has stopped); with `countErrors` a failed call is counted
 * in `errors` and the worker goes on, so a report can show the count and refuse to score the run.
 * `onMeasureStart` is awaited between the warm-up and the measured period (snapshots of counters): the workers
 * are drained there, so the snapshot sees no call in flight.
 *
 * Time is read with process.hrtime.bigint after each call, not with timers: with a synchronous store every
 * `await` resumes in a microtask, the event loop never turns, and a setTimeout would never fire.
 */
export async function runClosedLoop({ call, keys, concurrency, warmupMs, measureMs, countErrors = false, onMeasureStart }) {
  keys.reset();
  if (onMeasureStart && warmupMs > 0) {
    await runPhase({ call, keys, concurrency, durationMs: warmupMs, countErrors, record: false });
    await onMeasureStart();
    return runPhase({ call, keys, concurrency, durationMs: measureMs, countErrors, record: true });
  }
  return runPhase({ call, keys, concurrency, durationMs: measureMs, skipMs: warmupMs, countErrors, record: true });
}

async function runPhase({ call, keys, concurrency, durationMs, skipMs = 0, countErrors, record }) {
  const start = process.hrtime.bigint();
  const measureFrom = start + BigInt(Math.round(skipMs * 1e6));
  const measureUntil = measureFrom + BigInt(Math.round(durationMs * 1e6));
  const latencies = new LatencyRecorder();
  let allowed = 0;
  let degraded = 0;
  let errors = 0;
  let failure = null;

  const worker = async () => {
    while (failure === null) {
      const key = keys.next();
      const before = process.hrtime.bigint();
      let outcome;
      try {
        outcome = await call(key);
      } catch (error) {
        if (!countErrors) {
          failure ??= error;
          return;
        }
        outcome = null;
      }
      const after = process.hrtime.bigint();
      if (after >= measureUntil) return;
      if (after >= measureFrom && record) {
        if (outcome === null) {
          errors++;
          continue;
        }
        latencies.add(Number(after - before));
        if (outcome === true || outcome?.allowed === true) allowed++;
        if (outcome?.degraded) degraded++;
      }
    }
  };

  await Promise.all(Array.from({ length: concurrency }, worker));
  if (failure !== null) throw failure;
  const [p50, p99] = latencies.percentilesMs(0.5, 0.99);
  return {
    decisions: latencies.count,
    perSecond: latencies.count / (durationMs / 1000),
    allowedShare: latencies.count === 0 ? NaN : allowed / latencies.count,
    degraded,
    errors,
    p50,
    p99,
  };
}
