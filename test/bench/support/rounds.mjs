// Round-robin runs and how they are scored. Every case runs once per round, and the order rotates from round
// to round, so no case always runs first (cold caches) or last (after the machine warmed up), and a burst of
// noise on the machine lands on different cases in different rounds. A ratio is taken within one round (ours and
// the peer ran minutes apart at most) and summarised over the rounds; a goal is met only when its WORST round
// clears the threshold, and only when the runs it compares were clean (0 errors, 0 non-2xx, 0 degraded).
import { NOISY_CORES } from './machine-noise.mjs';

/** BENCH_ROUNDS (default 5, at least 5 unless BENCH_ALLOW_FEW_ROUNDS=1 for smoke runs). */
export function benchRounds() {
  const raw = process.env.BENCH_ROUNDS ?? '5';
  const rounds = Number(raw);
  if (!Number.isSafeInteger(rounds) || rounds < 1) throw new Error(`BENCH_ROUNDS must be a positive integer, got ${JSON.stringify(raw)}`);
  if (rounds < 5 && process.env.BENCH_ALLOW_FEW_ROUNDS !== '1') {
    throw new Error(`BENCH_ROUNDS must be at least 5 for a report that scores goals, got ${rounds} (BENCH_ALLOW_FEW_ROUNDS=1 for a smoke run)`);
  }
  return rounds;
}

/**
 * Runs every case once per round, in an order rotated by one each round. `runCase(case, round)` resolves to the
 * run's measurements; each run is kept as { id, round, position, ...measurements }.
 */
export async function runRounds({ rounds, cases, runCase, log = () => {} }) {
  const runs = [];
  const total = rounds * cases.length;
  for (let round = 1; round <= rounds; round++) {
    const shift = (round - 1) % cases.length;
    const order = [...cases.slice(shift), ...cases.slice(0, shift)];
    for (const [position, benchCase] of order.entries()) {
      const result = await runCase(benchCase, round);
      const run = { id: benchCase.id, round, position, ...result };
      runs.push(run);
      log(run, runs.length, total);
    }
  }
  return runs;
}

export const median = (xs) => quantile(xs, 0.5);

/** Linear-interpolated quantile of the finite values; NaN when there are none. */
export function quantile(values, q) {
  const xs = values.filter(Number.isFinite).sort((a, b) => a - b);
  if (xs.length === 0) return NaN;
  const at = (xs.length - 1) * q;
  const lo = Math.floor(at);
  return xs[lo] + (xs[Math.min(lo + 1, xs.length - 1)] - xs[lo]) * (at - lo);
}

/** { median, min, max, spread } of the finite values; spread = (max - min) / median. */
export function summary(values) {
  const xs = values.filter(Number.isFinite);
  const m = median(xs);
  const min = xs.length ? Math.min(...xs) : NaN;
  const max = xs.length ? Math.max(...xs) : NaN;
  return { median: m, min, max, spread: (max - min) / m, n: xs.length };
}

/** The runs of one case, by round. */
export const runsOf = (runs, id) => runs.filter((r) => r.id === id).sort((a, b) => a.round - b.round);

/** Per-round ratios `metric(a) / metric(b)` of two cases, over the rounds both ran. */
export function roundRatios(runs, idA, idB, metric = (r) => r.perSecond) {
  const b = new Map(runsOf(runs, idB).map((r) => [r.round, r]));
  return runsOf(runs, idA)
    .filter((r) => b.has(r.round))
    .map((r) => metric(r) / metric(b.get(r.round)));
}

/** What keeps a case's runs from scoring: errors, non-2xx responses, degraded decisions, anywhere in its rounds. */
export function blockersOf(runs, id) {
  const mine = runsOf(runs, id);
  const sum = (field) => mine.reduce((a, r) => a + (r[field] ?? 0), 0);
  const out = [];
  if (sum('errors') > 0) out.push(`${sum('errors')} errors`);
  if (sum('non2xx') > 0) out.push(`${sum('non2xx')} non-2xx`);
  if (sum('degraded') > 0) out.push(`${sum('degraded')} degraded decisions`);
  return out.map((b) => `${id}: ${b}`);
}

/** Rounds in which any of the cases ran while the rest of the machine was busier than NOISY_CORES. */
export function noisyRounds(runs, ids) {
  return [...new Set(runs.filter((r) => ids.includes(r.id) && r.othersCores > NOISY_CORES).map((r) => r.round))].sort((a, b) => a - b);
}

const x = (n) => (Number.isFinite(n) ? `${n.toFixed(2)}x` : '-');
const us = (n) => (Number.isFinite(n) ? `${n.toFixed(1)} µs` : '-');
const count = (n) => Math.round(n).toLocaleString('en-US');
const UNITS = { x: { format: x, threshold: (t) => `${t}x` }, us: { format: us, threshold: (t) => `${t} µs` }, count: { format: count, threshold: count } };

/**
 * A goal scored on per-round ratios. `atLeast`: the ratio must be >= threshold in every round (the worst round
 * is the lowest); otherwise it must be <= threshold in every round (the worst is the highest). `blockers` (from
 * blockersOf, or 'not available') make it unmet whatever the ratios say. `detail` is appended to the text.
 */
export function scoreGoal({ label, ratios, threshold, atLeast = true, blockers = [], noisy = [], detail = '' }) {
  return scoreRounds({ label, values: ratios, threshold, atLeast, blockers, noisy, detail });
}

/**
 * A goal scored on one value per round (a ratio, unit 'x', or µs, unit 'us'). `by: 'worst'` (the default): every
 * round must clear the threshold (>= with `atLeast`, else <=); `by: 'median'`: the median over the rounds must,
 * and the rounds' range and spread ((max - min) / median) are reported beside it. Blockers, noise and detail as
 * for scoreGoal.
 */
export function scoreRounds({ label, values, threshold, atLeast = true, by = 'worst', unit = 'x', blockers = [], noisy = [], detail = '' }) {
  const s = summary(values);
  const { format, threshold: shown } = UNITS[unit];
  const worst = atLeast ? s.min : s.max;
  const scored = by === 'median' ? s.median : worst;
  const clears = s.n > 0 && (atLeast ? scored >= threshold : scored <= threshold);
  const met = clears && blockers.length === 0;
  const sign = atLeast ? '>=' : '<=';
  const range = unit === 'x' ? `${format(s.min)}-${format(s.max)}` : `${format(s.min)} to ${format(s.max)}`;
  const spread = by === 'median' && Number.isFinite(s.spread) ? `, spread ${(s.spread * 100).toFixed(1)}%` : '';
  const parts = [
    s.n === 0
      ? `no rounds to score (${sign} ${shown(threshold)})`
      : `median ${format(s.median)}, rounds ${range} (n=${s.n}${spread}); ${by === 'median' ? 'median' : 'worst round'} ${format(scored)} ${sign} ${shown(threshold)}: ${clears ? 'yes' : 'no'}`,
  ];
  if (blockers.length) parts.push(`not scored: ${blockers.join(', ')}`);
  if (noisy.length) parts.push(`noisy rounds (others > ${NOISY_CORES} cores): ${noisy.join(', ')}`);
  if (detail) parts.push(detail);
  return { met, label, threshold, by, median: s.median, worst, text: `${label}: ${parts.join('; ')}` };
}

const GOALS_INTRO =
  'Each goal is scored on ratios taken within a round (both cases ran in the same round, minutes apart at most); ' +
  'it is met only when its WORST round clears the threshold and the cases compared had 0 errors, 0 non-2xx and ' +
  '0 degraded (failure-policy) decisions in every round.';

/** The goals as a markdown section: one line each, met or NOT met, and the count; `intro` says how they are scored. */
export function goalsMarkdown(goals, heading = '## Goals', intro = GOALS_INTRO) {
  const lines = goals.map((g) => `- **${g.met ? 'met' : 'NOT met'}**: ${g.text}`);
  const met = goals.filter((g) => g.met).length;
  return [
    heading,
    '',
    intro,
    '',
    ...lines,
    '',
    `${met} of ${goals.length} goals met.`,
  ].join('\n');
}
