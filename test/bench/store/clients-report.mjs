// The `clients` group's table and goals: per client library, ours (fixed and sliding window) against RLF on the
// same library, and against ours on ioredis in the same round.
import { blockersOf, median, noisyRounds, roundRatios, runsOf, scoreGoal, summary } from '../support/rounds.mjs';
import { markdownTable } from '../support/report.mjs';
import { CLIENT_ALGORITHMS, CLIENT_LIBRARIES, REFERENCE_LIBRARY, clientOursId, clientRlfId } from './client-libraries.mjs';
import { betterOf } from './report.mjs';

const int = (n) => (Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : '-');
const x = (n) => (Number.isFinite(n) ? `${n.toFixed(2)}x` : '-');

/**
 * A run with errors or degraded decisions: left out of the table. A degraded decision came from the failure policy;
 * once the breaker opened, the load loop's calls were all decided in memory, resolving in microtasks, and the event
 * loop never turned again to read the probe's reply: the rest of the run was degraded, at memory speed.
 */
const unclean = (r) => r.errors > 0 || r.degraded > 0;

/** RLF's case on `library`: its better auto-pipelining setting (higher median), or its only one. */
const rlfOf = (runs, library) => betterOf(runs, library.pipelining.map((ap) => clientRlfId(library.id, ap)));

const rlfSetting = (id) => (id.endsWith('-ap-on') ? 'auto-pipelining on' : id.endsWith('-ap-off') ? 'auto-pipelining off' : 'its only setting');

/** "median (worst)" of decisions/s of the clean runs, the worst being the lowest; "[4/5]" when runs were left out. */
function rateCell(runs, clean, id) {
  const s = summary(runsOf(clean, id).map((r) => r.perSecond));
  const all = runsOf(runs, id).length;
  return s.n ? `${int(s.median)} (${int(s.min)})${s.n < all ? ` [${s.n}/${all}]` : ''}` : 'n/a';
}

/** Median app CPU µs per decision of a case. */
function appCpu(runs, id) {
  const us = median(runsOf(runs, id).map((r) => r.appCpuUsPerDecision));
  return Number.isFinite(us) ? us.toFixed(1) : '-';
}

/** The runs of a case left out: with errors or degraded decisions (they also keep its goals from scoring). */
const leftOut = (runs, id) => String(runsOf(runs, id).filter(unclean).length);

/** "median (worst)" of the per-round ratios a / b. */
function ratioCell(runs, a, b) {
  const s = summary(roundRatios(runs, a, b));
  return s.n ? `${x(s.median)} (${x(s.min)})` : 'n/a';
}

/**
 * One row per library: decisions/s of ours and RLF, and the per-round ratios to RLF and to ours on ioredis, over the
 * runs with no error and no degraded decision; with `detail`, also app CPU per decision and the runs left out.
 */
export function clientsTable(runs, { detail = true } = {}) {
  const clean = runs.filter((r) => !unclean(r));
  const headers = [
    'library',
    'ours fixed window',
    'ours sliding window',
    'RLF (better setting)',
    'fixed vs RLF',
    'sliding vs RLF',
    'fixed vs ours on ioredis',
    'sliding vs ours on ioredis',
    ...(detail ? ['app CPU µs/decision: fixed / sliding / RLF', 'runs left out: fixed / sliding / RLF'] : []),
  ];
  const rows = CLIENT_LIBRARIES.map((library) => {
    const fixedId = clientOursId(library.id, 'fixed-window');
    const slidingId = clientOursId(library.id, 'sliding-window');
    const rlf = rlfOf(clean, library);
    const vsReference = (id, algorithm) => (library.id === REFERENCE_LIBRARY ? '(reference)' : ratioCell(clean, id, clientOursId(REFERENCE_LIBRARY, algorithm)));
    const rlfRate = rlf ? `${rateCell(runs, clean, rlf).replace(/ \(.*?\)/, '')} (${rlfSetting(rlf)})` : 'n/a';
    const cases = [fixedId, slidingId, rlf];
    return [
      // "node-redis 5" and "node-redis 6" are told apart by their version.
      `${library.name.replace(/ \d+$/, '')} ${library.version}`,
      rateCell(runs, clean, fixedId),
      rateCell(runs, clean, slidingId),
      rlfRate,
      rlf ? ratioCell(clean, fixedId, rlf) : 'n/a',
      rlf ? ratioCell(clean, slidingId, rlf) : 'n/a',
      vsReference(fixedId, 'fixed-window'),
      vsReference(slidingId, 'sliding-window'),
      ...(detail ? [cases.map((id) => appCpu(clean, id)).join(' / '), cases.map((id) => leftOut(runs, id)).join(' / ')] : []),
    ];
  });
  return markdownTable(headers, rows, [false, ...headers.slice(1).map(() => true)]);
}

/** What the table's cells mean, said once under it (`detail` as for clientsTable). */
export function clientsTableNote({ detail = true } = {}) {
  return [
    'Decisions/s as median (worst round) over the rounds with no error and no degraded decision (`[4/5]`: one round',
    'left out); ratios are taken within a round, over the rounds where both cases were clean, as median (worst round).',
    'Ours: coalescing on, the client passed as `store`, 200 in flight over 10,000 keys, every call admitted.',
    'RLF: RateLimiterRedis on ioredis and node-redis (`useRedisPackage: true`: EVAL of its script on every call),',
    'RateLimiterValkey on iovalkey, RateLimiterValkeyGlide on GLIDE (FCALL of a function it loads), each at its better',
    'auto-pipelining setting where the client has one; the Valkey limiters with `redis.` in place of `server.` in their',
    'Lua (Redis 7.0 knows only `redis.`).',
    ...(detail
      ? [
          'App CPU: the bench process\'s user + system CPU (every thread) per decision, median over the clean rounds; a',
          'busy machine moves it less than decisions/s. A case with a run left out scores no goal: a degraded run was',
          'decided by the failure policy, in memory, from the moment the breaker opened to the end of the run (the load',
          'loop\'s calls then resolve in microtasks and the event loop never turns to read the probe\'s reply).',
        ]
      : []),
  ].join(' ');
}

function ratioGoal(runs, label, a, b, threshold) {
  if (!runsOf(runs, a).length || !runsOf(runs, b).length) return scoreGoal({ label, ratios: [], threshold, blockers: ['not run'] });
  return scoreGoal({ label, ratios: roundRatios(runs, a, b), threshold, blockers: [...blockersOf(runs, a), ...blockersOf(runs, b)], noisy: noisyRounds(runs, [a, b]) });
}

/**
 * Per library: fixed window >= 3x RLF on the same library (its better setting); and on every library but ioredis,
 * ours >= 0.85x ours on ioredis in the same round, fixed and sliding window.
 */
export function clientGoals(runs) {
  const goals = [];
  for (const library of CLIENT_LIBRARIES) {
    const rlf = rlfOf(runs, library) ?? clientRlfId(library.id, library.pipelining[0]);
    goals.push(ratioGoal(runs, `${library.name}: fixed-window decisions/s >= 3x ${library.rlf.name} (${rlfSetting(rlf)})`, clientOursId(library.id, 'fixed-window'), rlf, 3));
  }
  for (const library of CLIENT_LIBRARIES.filter((l) => l.id !== REFERENCE_LIBRARY)) {
    for (const algorithm of CLIENT_ALGORITHMS) {
      goals.push(
        ratioGoal(runs, `${library.name}: ${algorithm} decisions/s >= 0.85x ours on ${REFERENCE_LIBRARY}`, clientOursId(library.id, algorithm), clientOursId(REFERENCE_LIBRARY, algorithm), 0.85),
      );
    }
  }
  return goals;
}
