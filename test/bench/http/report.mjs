// Markdown rendering of the HTTP bench: per-run table, summary with ratios, goals.
import { markdownTable } from '../support/report.mjs';

const int = (n) => (Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : '-');
const ms = (n) => (Number.isFinite(n) ? n.toFixed(2) : '-');
const ratio = (n) => (Number.isFinite(n) ? `${n.toFixed(2)}x` : '-');
const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;

export const format = { int, ms, ratio };

/** Every measured run, in the order they ran. */
export function runsTable(runs) {
  const headers = ['#', 'variant', 'case', 'run', 'req/s', 'p50 ms', 'p99 ms', 'non-2xx', 'errors', 'degraded', 'app CPU µs/req', 'redis CPU µs/req', 'script µs/call', 'script calls/req', 'autocannon CPU µs/req', 'redis keys', "others' CPU", 'load 1m'];
  const rows = runs.map((r, i) => [
    String(i + 1),
    r.variant.label,
    r.guard.label,
    String(r.run),
    int(r.perSecond),
    ms(r.p50),
    ms(r.p99),
    int(r.non2xx),
    int(r.errors + r.timeouts),
    r.guard.kind === 'ours' ? int(r.degraded) : '-',
    int(r.appCpuUsPerRequest),
    int(r.redisCpuUsPerRequest),
    Number.isFinite(r.scriptUsPerCall) ? r.scriptUsPerCall.toFixed(1) : '-',
    r.scriptCallsPerRequest > 0 ? r.scriptCallsPerRequest.toFixed(3) : '-',
    int(r.benchCpuUsPerRequest),
    int(r.redisKeys),
    Number.isFinite(r.othersCores) ? `${r.othersCores.toFixed(2)} cores` : '-',
    Number.isFinite(r.loadAverage) ? r.loadAverage.toFixed(2) : '-',
  ]);
  return markdownTable(headers, rows, [true, false, false, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true]);
}

/**
 * Runs of one case grouped: mean req/s, mean of the runs' p50/p99, summed non-2xx; and the mean req/s of its
 * quiet runs only (the rest of the machine used less than `quietCores` meanwhile), NaN when it had none.
 */
export function summarise(runs, variants, guards, quietCores) {
  const summary = [];
  for (const variant of variants) {
    for (const guard of guards) {
      const mine = runs.filter((r) => r.variant.id === variant.id && r.guard.id === guard.id);
      if (mine.length === 0) continue;
      const quiet = mine.filter((r) => r.othersCores < quietCores);
      summary.push({
        variant,
        guard,
        runs: mine,
        perSecond: mean(mine.map((r) => r.perSecond)),
        quietPerSecond: quiet.length ? mean(quiet.map((r) => r.perSecond)) : NaN,
        quietRuns: quiet.length,
        p50: mean(mine.map((r) => r.p50)),
        p99: mean(mine.map((r) => r.p99)),
        non2xx: mine.reduce((a, r) => a + r.non2xx, 0),
        errors: mine.reduce((a, r) => a + r.errors + r.timeouts, 0),
        degraded: mine.reduce((a, r) => a + (r.degraded ?? 0), 0),
        requests: mine.reduce((a, r) => a + r.requests, 0),
        appCpuUsPerRequest: mean(mine.map((r) => r.appCpuUsPerRequest)),
      });
    }
  }
  return summary;
}

/** The summary row of `guardId` in the same variant as `row`. */
export const sameVariant = (summary, row, guardId) => summary.find((s) => s.variant.id === row.variant.id && s.guard.id === guardId);

export function summaryTable(summary, runCount) {
  const runHeaders = Array.from({ length: runCount }, (_, i) => `run ${i + 1} req/s`);
  const headers = ['variant', 'case', ...runHeaders, 'mean req/s', 'quiet runs: mean req/s (n)', 'p50 ms', 'p99 ms', 'non-2xx', 'degraded', 'app CPU µs/req', 'vs no guard', 'vs throttler+redis'];
  const rows = summary.map((s) => {
    const none = sameVariant(summary, s, 'none');
    const throttler = sameVariant(summary, s, 'throttler');
    return [
      s.variant.label,
      s.guard.label,
      ...runHeaders.map((_, i) => int(s.runs[i]?.perSecond)),
      int(s.perSecond),
      s.quietRuns ? `${int(s.quietPerSecond)} (${s.quietRuns})` : '-',
      ms(s.p50),
      ms(s.p99),
      int(s.non2xx),
      s.guard.kind === 'ours' ? int(s.degraded) : '-',
      int(s.appCpuUsPerRequest),
      ratio(none ? s.perSecond / none.perSecond : NaN),
      ratio(throttler ? s.perSecond / throttler.perSecond : NaN),
    ];
  });
  return markdownTable(headers, rows, [false, false, ...runHeaders.map(() => true), true, true, true, true, true, true, true, true, true]);
}

/**
 * Per variant and algorithm of ours: >= 1.2x throttler+redis, >= 0.85x no guard, judged on the mean req/s of all
 * runs; the ratio of the quiet runs' means is given beside it when both cases had one.
 */
export function evaluateGoals(summary) {
  const goals = [];
  for (const row of summary.filter((s) => s.guard.kind === 'ours' && s.guard.goal)) {
    const none = sameVariant(summary, row, 'none');
    const throttler = sameVariant(summary, row, 'throttler');
    const spread = (s) => s.runs.map((r) => int(r.perSecond)).join(' / ');
    const quietRatio = (other) =>
      row.quietRuns && other.quietRuns ? `; quiet runs only: ${ratio(row.quietPerSecond / other.quietPerSecond)} (${row.quietRuns} vs ${other.quietRuns} runs)` : '; no quiet run to compare';
    // Decisions the failure policy made (Redis slower than the guard's timeout) did not go to Redis: say so.
    const caution =
      row.degraded > 0
        ? `; caution: ${int(row.degraded)} of ${int(row.requests)} decisions (${((row.degraded / row.requests) * 100).toFixed(2)}%) were degraded (made by the memory fallback, not Redis)`
        : '';
    if (throttler) {
      const value = row.perSecond / throttler.perSecond;
      goals.push({
        met: value >= 1.2,
        text: `${row.variant.label}, ${row.guard.label} >= 1.2x throttler+redis: ${ratio(value)} (${int(row.perSecond)} vs ${int(throttler.perSecond)} req/s; runs ${spread(row)} vs ${spread(throttler)})${quietRatio(throttler)}${caution}`,
      });
    }
    if (none) {
      const value = row.perSecond / none.perSecond;
      goals.push({
        met: value >= 0.85,
        text: `${row.variant.label}, ${row.guard.label} >= 0.85x no guard: ${ratio(value)} (${int(row.perSecond)} vs ${int(none.perSecond)} req/s; runs ${spread(row)} vs ${spread(none)})${quietRatio(none)}${caution}`,
      });
    }
  }
  return goals;
}
