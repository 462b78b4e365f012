// The store bench's tables and goals, from the runs of every round (support/rounds.mjs).
import { NOISY_CORES } from '../support/machine-noise.mjs';
import { blockersOf, median, noisyRounds, roundRatios, runsOf, scoreGoal, summary } from '../support/rounds.mjs';
import { markdownTable } from '../support/report.mjs';

const int = (n) => (Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : '-');
const fixed = (digits) => (n) => (Number.isFinite(n) ? n.toFixed(digits) : '-');
const pct = (n) => (Number.isFinite(n) ? `${(n * 100).toFixed(1)}%` : '-');
const us = (ms) => (Number.isFinite(ms) ? (ms * 1000).toFixed(0) : '-');

const medianOf = (runs, id, metric) => median(runsOf(runs, id).map(metric));

/** One row per case: medians over the rounds, spread of decisions/s, what keeps it from scoring. */
export function casesTable(runs, cases) {
  const headers = ['case', 'decisions/s (median)', 'min-max', 'spread', 'p50 µs', 'p99 µs', 'app CPU µs/decision', 'Redis CPU µs/decision', 'script µs/decision', 'script calls/decision', 'allowed', 'errors', 'degraded', 'noisy runs'];
  const rows = cases.map((c) => {
    const mine = runsOf(runs, c.id);
    const s = summary(mine.map((r) => r.perSecond));
    const m = (metric) => median(mine.map(metric));
    const noisy = mine.filter((r) => r.othersCores > NOISY_CORES).length;
    return [
      c.label,
      int(s.median),
      `${int(s.min)}-${int(s.max)}`,
      pct(s.spread),
      us(m((r) => r.p50)),
      us(m((r) => r.p99)),
      fixed(1)(m((r) => r.appCpuUsPerDecision)),
      fixed(1)(m((r) => r.redisCpuUsPerDecision)),
      fixed(1)(m((r) => r.scriptUsPerDecision)),
      fixed(3)(m((r) => r.scriptCallsPerDecision)),
      pct(m((r) => r.allowedShare)),
      int(mine.reduce((a, r) => a + r.errors, 0)),
      int(mine.reduce((a, r) => a + r.degraded, 0)),
      `${noisy}/${mine.length}`,
    ];
  });
  return markdownTable(headers, rows, [false, ...headers.slice(1).map(() => true)]);
}

/** Every run: decisions/s per round, with the CPU the rest of the machine used (cores), `*` when noisy. */
export function roundsTable(runs, cases, rounds) {
  const headers = ['case', ...Array.from({ length: rounds }, (_, i) => `round ${i + 1}`)];
  const rows = cases.map((c) => {
    const byRound = new Map(runsOf(runs, c.id).map((r) => [r.round, r]));
    return [
      c.label,
      ...Array.from({ length: rounds }, (_, i) => {
        const r = byRound.get(i + 1);
        if (!r) return '-';
        return `${int(r.perSecond)} (${r.othersCores.toFixed(2)}${r.othersCores > NOISY_CORES ? '*' : ''})`;
      }),
    ];
  });
  return markdownTable(headers, rows, [false, ...headers.slice(1).map(() => true)]);
}

/** The peer case (of `ids`) with the higher median decisions/s: its better auto-pipelining setting. */
export function betterOf(runs, ids) {
  return ids.filter((id) => runsOf(runs, id).length > 0).sort((a, b) => medianOf(runs, b, (r) => r.perSecond) - medianOf(runs, a, (r) => r.perSecond))[0];
}

/** A goal on per-round ratios of cases `a` over `b`; blockers and noisy rounds of both. */
function ratioGoal(runs, { label, a, b, threshold, atLeast = true, metric, extraBlockers = [], detail = '' }) {
  if (!runsOf(runs, a).length) return scoreGoal({ label, ratios: [], threshold, atLeast, blockers: [`${a}: not run`] });
  return scoreGoal({
    label,
    ratios: roundRatios(runs, a, b, metric),
    threshold,
    atLeast,
    blockers: [...blockersOf(runs, a), ...blockersOf(runs, b), ...extraBlockers],
    noisy: noisyRounds(runs, [a, b]),
    detail,
  });
}

/** Two cases that should take the same path (admit or refuse) but did not: their allowed shares differ. */
function pathBlocker(runs, a, b) {
  const shareA = medianOf(runs, a, (r) => r.allowedShare);
  const shareB = medianOf(runs, b, (r) => r.allowedShare);
  return Math.abs(shareA - shareB) > 0.1 ? [`paths differ: allowed ${pct(shareA)} vs ${pct(shareB)}`] : [];
}

const perDecision = (field) => (r) => r[field];

/**
 * The goals of the issue, scored. `ours(algorithm, coalesce)` names our case id (undefined when not run);
 * `coalesce` says whether the module had the option (when not, the "on" goals are unmet: not available).
 */
export function storeGoals(runs, { algorithms, counters, ours, coalesce, memoryIds, latencyIds }) {
  const goals = [];
  const rlf = betterOf(runs, ['rlf-ap-on', 'rlf-ap-off']);
  const noop = betterOf(runs, ['noop-ap-on', 'noop-ap-off']);
  const setting = (id) => (id.endsWith('-on') ? 'auto-pipelining on' : 'auto-pipelining off');
  const unavailable = coalesce ? [] : ['coalescing not available in this build'];
  for (const algorithm of algorithms) {
    const on = ours(algorithm, true);
    const off = ours(algorithm, false);
    const rlfThreshold = counters.includes(algorithm) ? 3 : 2;
    goals.push(ratioGoal(runs, { label: `Redis ${algorithm}, coalescing on, decisions/s >= ${rlfThreshold}x RLF (${setting(rlf)})`, a: on, b: rlf, threshold: rlfThreshold, extraBlockers: unavailable }));
    goals.push(ratioGoal(runs, { label: `Redis ${algorithm}, coalescing on, decisions/s >= 2x raw EVALSHA return 1 (${setting(noop)})`, a: on, b: noop, threshold: 2, extraBlockers: unavailable }));
    goals.push(ratioGoal(runs, { label: `Redis ${algorithm}, coalescing off, decisions/s >= 1.0x RLF (${setting(rlf)})`, a: off, b: rlf, threshold: 1 }));
    goals.push(ratioGoal(runs, { label: `Redis ${algorithm}, coalescing on, Redis CPU/decision <= 0.5x RLF's`, a: on, b: rlf, threshold: 0.5, atLeast: false, metric: perDecision('redisCpuUsPerDecision'), extraBlockers: unavailable }));
    goals.push(ratioGoal(runs, { label: `Redis ${algorithm}, coalescing off, Redis CPU/decision <= 1.0x RLF's`, a: off, b: rlf, threshold: 1, atLeast: false, metric: perDecision('redisCpuUsPerDecision') }));
    goals.push(ratioGoal(runs, { label: `Redis ${algorithm}, coalescing on, p99 at 200 in flight <= RLF's`, a: on, b: rlf, threshold: 1, atLeast: false, metric: perDecision('p99'), extraBlockers: unavailable }));
    goals.push(ratioGoal(runs, { label: `Redis ${algorithm}, coalescing off, p99 at 200 in flight <= RLF's`, a: off, b: rlf, threshold: 1, atLeast: false, metric: perDecision('p99') }));
  }
  if (latencyIds) {
    // A difference, not a ratio: p50(on) - p50(off) of the same round, in µs.
    const off = new Map(runsOf(runs, latencyIds.off).map((r) => [r.round, r]));
    const diffs = runsOf(runs, latencyIds.on)
      .filter((r) => off.has(r.round))
      .map((r) => (r.p50 - off.get(r.round).p50) * 1000);
    const s = summary(diffs);
    const blockers = [...blockersOf(runs, latencyIds.on), ...blockersOf(runs, latencyIds.off), ...unavailable];
    const clears = s.n > 0 && s.max <= 20;
    goals.push({
      met: clears && blockers.length === 0,
      text:
        `1 in flight, coalescing adds <= 20 µs to p50: median ${fixed(1)(s.median)} µs, rounds ${fixed(1)(s.min)} to ${fixed(1)(s.max)} µs (n=${s.n}); ` +
        `worst round ${fixed(1)(s.max)} µs <= 20: ${clears ? 'yes' : 'no'}${blockers.length ? `; not scored: ${blockers.join(', ')}` : ''}`,
    });
  } else {
    goals.push({ met: false, text: '1 in flight, coalescing adds <= 20 µs to p50: not available (the module has no coalesce option in this build)' });
  }
  for (const keys of ['10k', '1M']) {
    const id = (scenario, subject) => memoryIds(keys, scenario, subject);
    goals.push(ratioGoal(runs, { label: `Memory ${keys} keys, all admitted, module >= 1.2x RateLimiterMemory`, a: id('admit', 'module'), b: id('admit', 'rlf'), threshold: 1.2, extraBlockers: pathBlocker(runs, id('admit', 'module'), id('admit', 'rlf')) }));
    goals.push(ratioGoal(runs, { label: `Memory ${keys} keys, nearly all refused, module >= 2x RateLimiterMemory`, a: id('refuse', 'module'), b: id('refuse', 'rlf'), threshold: 2, extraBlockers: pathBlocker(runs, id('refuse', 'module'), id('refuse', 'rlf')) }));
    goals.push(ratioGoal(runs, { label: `Memory ${keys} keys, all admitted, bare MemoryStore >= 1.5x RateLimiterMemory`, a: id('admit', 'bare'), b: id('admit', 'rlf'), threshold: 1.5, extraBlockers: pathBlocker(runs, id('admit', 'bare'), id('admit', 'rlf')) }));
  }
  goals.push(
    ratioGoal(runs, {
      label: 'Memory, no cliff at maxKeys: module at 1M keys (10x its default maxKeys, evicting) >= 0.5x module at 10k keys, all admitted',
      a: memoryIds('1M', 'admit', 'module'),
      b: memoryIds('10k', 'admit', 'module'),
      threshold: 0.5,
    }),
  );
  return goals;
}
