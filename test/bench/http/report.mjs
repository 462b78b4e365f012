// Markdown of the HTTP bench: one row per case (medians over the rounds and their spread), every run, the goals.
import { NOISY_CORES } from '../support/machine-noise.mjs';
import { blockersOf, median, noisyRounds, roundRatios, runsOf, scoreRounds, summary } from '../support/rounds.mjs';
import { markdownTable } from '../support/report.mjs';

const int = (n) => (Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : '-');
const ms = (n) => (Number.isFinite(n) ? n.toFixed(2) : '-');
const pct = (n) => (Number.isFinite(n) ? `${(n * 100).toFixed(1)}%` : '-');
const x = (n) => (Number.isFinite(n) ? `${n.toFixed(2)}x` : '-');
const us = (n) => (Number.isFinite(n) ? n.toFixed(1) : '-');

export const format = { int, ms, us };

/** What the goals read of a run: the app's and Redis's CPU per request, and their sum. */
const appCpu = (r) => r.appCpuUsPerRequest;
const redisCpu = (r) => r.redisCpuUsPerRequest;
const appAndRedisCpu = (r) => r.appCpuUsPerRequest + r.redisCpuUsPerRequest;

/** The throttler case of a group (adapter + variant) with the higher median req/s: its better setting. */
export function betterThrottler(runs, group) {
  const ids = [`${group}-throttler`, `${group}-throttler-ap`].filter((id) => runsOf(runs, id).length);
  return ids.sort((a, b) => median(runsOf(runs, b).map((r) => r.perSecond)) - median(runsOf(runs, a).map((r) => r.perSecond)))[0];
}

export function casesTable(runs, cases) {
  const headers = ['adapter', 'clients', 'case', 'req/s (median)', 'min-max', 'spread', 'vs no guard (median, min-max)', 'p50 ms', 'p99 ms', 'app CPU µs/req', 'Redis CPU µs/req', 'app + Redis CPU µs/req', 'Redis scripts/req', 'load generator CPU µs/req', 'machine busy (cores)', 'non-2xx', 'errors', 'degraded', 'noisy runs'];
  const rows = cases.map((c) => {
    const mine = runsOf(runs, c.id);
    const s = summary(mine.map((r) => r.perSecond));
    const m = (f) => median(mine.map(f));
    const ratios = summary(roundRatios(runs, c.id, `${c.group}-none`));
    const sum = (f) => mine.reduce((a, r) => a + (r[f] ?? 0), 0);
    return [
      c.adapter,
      c.variant.label,
      c.guard.label,
      int(s.median),
      `${int(s.min)}-${int(s.max)}`,
      pct(s.spread),
      c.guard.id === 'none' ? '-' : `${x(ratios.median)} (${x(ratios.min)}-${x(ratios.max)})`,
      ms(m((r) => r.p50)),
      ms(m((r) => r.p99)),
      us(m(appCpu)),
      c.guard.id === 'none' ? '-' : ms(m(redisCpu)),
      us(m(appAndRedisCpu)),
      c.guard.kind === 'ours' || c.guard.kind === 'throttler' ? ms(m((r) => r.scriptCallsPerRequest)) : '-',
      int(m((r) => r.loadCpuUsPerRequest)),
      m((r) => r.machineBusyCores).toFixed(2),
      int(sum('non2xx')),
      int(sum('errors')),
      c.guard.kind === 'ours' ? int(sum('degraded')) : '-',
      `${mine.filter((r) => r.othersCores > NOISY_CORES).length}/${mine.length}`,
    ];
  });
  return markdownTable(headers, rows, [false, false, false, ...headers.slice(3).map(() => true)]);
}

export function roundsTable(runs, cases, rounds) {
  const headers = ['case', ...Array.from({ length: rounds }, (_, i) => `round ${i + 1}`)];
  const rows = cases.map((c) => {
    const byRound = new Map(runsOf(runs, c.id).map((r) => [r.round, r]));
    return [
      `${c.adapter}, ${c.variant.label}, ${c.guard.label}`,
      ...Array.from({ length: rounds }, (_, i) => {
        const r = byRound.get(i + 1);
        return r ? `${int(r.perSecond)} (${r.othersCores.toFixed(2)}${r.othersCores > NOISY_CORES ? '*' : ''})` : '-';
      }),
    ];
  });
  return markdownTable(headers, rows, [false, ...headers.slice(1).map(() => true)]);
}

/** Per-round differences `metric(a) - metric(b)` of two cases, over the rounds both ran. */
export function roundDifferences(runs, idA, idB, metric) {
  const b = new Map(runsOf(runs, idB).map((r) => [r.round, r]));
  return runsOf(runs, idA)
    .filter((r) => b.has(r.round))
    .map((r) => metric(r) - metric(b.get(r.round)));
}

/** "median (min-max)" of per-round ratios, "median (min to max)" of µs (which may be negative). */
const span = (values, f) => {
  const s = summary(values);
  return `${f(s.median)} (${f(s.min)}${f === us ? ' to ' : '-'}${f(s.max)})`;
};
/** A case's req/s over its rounds: "median (spread)". */
const rate = (runs, id) => {
  const s = summary(runsOf(runs, id).map((r) => r.perSecond));
  return `${int(s.median)} (spread ${pct(s.spread)})`;
};
const medianOf = (runs, id, metric) => us(median(runsOf(runs, id).map(metric)));

/** Blockers of the cases a goal compares: not run, or errors / non-2xx / degraded decisions in any round. */
function blockersOfAll(runs, ids) {
  return ids.flatMap((id) => (runsOf(runs, id).length ? blockersOf(runs, id) : [`${id}: not run`]));
}

/**
 * The goals, per adapter and clients variant, for ours without a lease (the sliding-window default rule):
 * Redis CPU per request <= 5 µs and app CPU per request <= the PING guard's + 3 µs, in every round; req/s >=
 * 0.95x the PING guard's, as the median of the per-round ratios. Per adapter, with 1 client IP, for ours with
 * `localBudget: true`: app + Redis CPU per request <= the returns-true guard's + 3 µs in every round; req/s >= 0.93x
 * the no-guard app's, as the median. `localBudget`: whether this build has the option (if not, those goals are
 * reported as not available).
 */
export function httpGoals(runs, groups, { localBudget }) {
  const goals = [];
  for (const g of groups) {
    const [none, trueGuard, ping, ours] = ['none', 'admit-all', 'await-redis', 'ours'].map((guard) => `${g.id}-${guard}`);
    const throttler = betterThrottler(runs, g.id);
    const throttlerText = throttler ? `throttler+redis (${throttler.endsWith('-ap') ? 'auto-pipelining on' : 'auto-pipelining off'}, its better setting)` : null;
    const noisy = noisyRounds(runs, [ours, ping]);
    goals.push(
      scoreRounds({
        label: `HTTP ${g.label}, ours (no lease): Redis CPU per request <= 5 µs`,
        values: runsOf(runs, ours).map(redisCpu),
        threshold: 5,
        atLeast: false,
        unit: 'us',
        blockers: blockersOfAll(runs, [ours]),
        noisy: noisyRounds(runs, [ours]),
        detail:
          `Redis CPU µs/request, medians: the PING guard's ${medianOf(runs, ping, redisCpu)}` +
          (throttler ? `, ${throttlerText} ${medianOf(runs, throttler, redisCpu)}` : '') +
          `; Redis scripts per request: ${ms(median(runsOf(runs, ours).map((r) => r.scriptCallsPerRequest)))}`,
      }),
      scoreRounds({
        label: `HTTP ${g.label}, ours (no lease): app CPU per request <= the PING guard's + 3 µs`,
        values: roundDifferences(runs, ours, ping, appCpu),
        threshold: 3,
        atLeast: false,
        unit: 'us',
        blockers: blockersOfAll(runs, [ours, ping]),
        noisy,
        detail:
          `app CPU µs/request, medians: ours ${medianOf(runs, ours, appCpu)}, the PING guard's ${medianOf(runs, ping, appCpu)}, ` +
          `a guard that only returns true ${medianOf(runs, trueGuard, appCpu)}, no guard ${medianOf(runs, none, appCpu)}; ` +
          `ours over no guard ${span(roundDifferences(runs, ours, none, appCpu), us)} µs`,
      }),
      scoreRounds({
        label: `HTTP ${g.label}, ours (no lease): req/s >= 0.95x the PING guard's (median of the rounds)`,
        values: roundRatios(runs, ours, ping),
        threshold: 0.95,
        by: 'median',
        blockers: blockersOfAll(runs, [ours, ping]),
        noisy,
        detail:
          `req/s median (spread over the rounds): ours ${rate(runs, ours)}, the PING guard's ${rate(runs, ping)}, no guard ${rate(runs, none)}; ` +
          `of no guard, median (min-max): ours ${span(roundRatios(runs, ours, none), x)}, the PING guard ${span(roundRatios(runs, ping, none), x)}, ` +
          `a guard that only returns true ${span(roundRatios(runs, trueGuard, none), x)}` +
          (throttler ? `, ${throttlerText} ${span(roundRatios(runs, throttler, none), x)}` : ''),
      }),
    );
  }
  for (const g of groups.filter((group) => group.variant.id === 'one-ip')) {
    const [none, trueGuard, leased] = ['none', 'admit-all', 'ours-budget'].map((guard) => `${g.id}-${guard}`);
    const unavailable = localBudget ? [] : ['`localBudget` not available in this build'];
    const noisy = localBudget ? noisyRounds(runs, [leased, trueGuard, none]) : [];
    goals.push(
      scoreRounds({
        label: `HTTP ${g.label}, ours with \`localBudget: true\`: app + Redis CPU per request <= the returns-true guard's + 3 µs`,
        values: roundDifferences(runs, leased, trueGuard, appAndRedisCpu),
        threshold: 3,
        atLeast: false,
        unit: 'us',
        blockers: unavailable.length ? unavailable : blockersOfAll(runs, [leased, trueGuard]),
        noisy,
        detail: localBudget
          ? `app + Redis CPU µs/request, medians: ours leased ${medianOf(runs, leased, appAndRedisCpu)} (Redis ${medianOf(runs, leased, redisCpu)}), ` +
            `the returns-true guard's ${medianOf(runs, trueGuard, appAndRedisCpu)}, no guard ${medianOf(runs, none, appAndRedisCpu)}; ` +
            `Redis scripts per request: ${ms(median(runsOf(runs, leased).map((r) => r.scriptCallsPerRequest)))}`
          : '',
      }),
      scoreRounds({
        label: `HTTP ${g.label}, ours with \`localBudget: true\`: req/s >= 0.93x the no-guard app's (median of the rounds)`,
        values: roundRatios(runs, leased, none),
        threshold: 0.93,
        by: 'median',
        blockers: unavailable.length ? unavailable : blockersOfAll(runs, [leased, none]),
        noisy,
        detail: localBudget
          ? `req/s median (spread over the rounds): ours leased ${rate(runs, leased)}, no guard ${rate(runs, none)}, ` +
            `the returns-true guard ${rate(runs, trueGuard)} (${span(roundRatios(runs, trueGuard, none), x)} of no guard)`
          : '',
      }),
    );
  }
  return goals;
}

/** How the HTTP goals are scored (the goals section's introduction). */
export const HTTP_GOALS_INTRO =
  'Req/s spreads up to 2x between rounds of one case on this host, so the req/s goals are scored on the MEDIAN of ' +
  'ratios taken within a round (both cases ran in the same round, minutes apart at most), with the ratios\' range and ' +
  'spread ((max - min) / median) beside; the CPU-per-request goals are scored on their WORST round (per-round ' +
  'values, or per-round differences between the two cases). "Within 3 µs of" a reference is ' +
  'at most 3 µs above it (below it is within). A goal is met only when the cases compared had 0 errors, 0 non-2xx and ' +
  '0 degraded (failure-policy) decisions in every round.';
