// The store bench's section of the repository README (between <!-- bench:store --> markers): medians and the
// per-round ratio range of the headline cases, and the goals met, with a link to the full report.
import { NOISY_CORES } from '../support/machine-noise.mjs';
import { median, roundRatios, runsOf } from '../support/rounds.mjs';
import { markdownTable } from '../support/report.mjs';
import { betterOf } from './report.mjs';
import { clientGoals, clientsTable, clientsTableNote } from './clients-report.mjs';
import { describeOrigin } from './previous-runs.mjs';

const int = (n) => (Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : '-');
const x = (n) => (Number.isFinite(n) ? `${n.toFixed(2)}x` : '-');

function cell(runs, id, ref) {
  if (!runsOf(runs, id).length) return 'n/a';
  const rate = median(runsOf(runs, id).map((r) => r.perSecond));
  if (!ref) return int(rate);
  const ratios = roundRatios(runs, id, ref);
  return `${int(rate)} (${x(median(ratios))}, ${x(Math.min(...ratios))}-${x(Math.max(...ratios))})`;
}

/** `origins`: per group, the run its figures come from ({ commit, date, rounds, measureS }). */
export function readmeSummary({ runs, goals, coalesce, origins }) {
  const rlf = betterOf(runs, ['rlf-ap-on', 'rlf-ap-off']);
  const noop = betterOf(runs, ['noop-ap-on', 'noop-ap-off']);
  const algorithms = ['sliding-log', 'sliding-window', 'fixed-window', 'token-bucket', 'gcra'];
  const id = (a, on) => (coalesce ? `ours-${a}-co-${on ? 'on' : 'off'}` : `ours-${a}`);
  const redisRows = algorithms.map((a) => [a, cell(runs, id(a, true), rlf), coalesce ? cell(runs, id(a, false), rlf) : 'n/a']);
  const memRows = ['10k', '1M'].flatMap((k) =>
    ['admit', 'refuse'].map((s) => [
      `${k} keys, ${s === 'admit' ? 'all admitted' : 'nearly all refused'}`,
      cell(runs, `mem-${k}-${s}-module`, `mem-${k}-${s}-rlf`),
      cell(runs, `mem-${k}-${s}-bare`, `mem-${k}-${s}-rlf`),
      cell(runs, `mem-${k}-${s}-rlf`),
    ]),
  );
  const met = goals.filter((g) => g.met).length;
  const noisy = runs.filter((r) => r.othersCores > NOISY_CORES).length;
  const origin = (group) => describeOrigin(origins[group]);
  const sameRun = (group) => origin(group) === origin('redis');
  return [
    `**Store decisions/s** (\`npm run bench:store\`; ${origin('redis')}, interleaved rounds; ` +
      `median decisions/s, then the ratio to the peer as median and min-max over the rounds). Redis: 200 calls in flight over ` +
      `10,000 keys, ours through the whole module (ResilientStore, metrics on), RateLimiterRedis at its better ` +
      `auto-pipelining setting: ${int(median(runsOf(runs, rlf).map((r) => r.perSecond)))}/s; raw EVALSHA \`return 1\`: ` +
      `${int(median(runsOf(runs, noop).map((r) => r.perSecond)))}/s.`,
    '',
    markdownTable(['algorithm', coalesce ? 'ours, coalescing on (vs RLF)' : 'ours, module defaults (vs RLF)', 'ours, coalescing off (vs RLF)'], redisRows, [false, true, true]),
    '',
    `Memory (fixed window, the same path for both libraries; vs RateLimiterMemory${sameRun('memory') ? '' : `; ${origin('memory')}`}):`,
    '',
    markdownTable(['case', 'ours through the module', 'bare MemoryStore', 'RateLimiterMemory'], memRows, [false, true, true, true]),
    '',
    `What this harness allows a memory store: a minimal Map-based fixed window (no eviction, \`Date.now()\`, no ` +
      `validation; a reference, not a limiter) did ${cell(runs, 'mem-10k-admit-minimal', 'mem-10k-admit-rlf')} at 10k keys, all admitted.`,
    '',
    `Per client library${sameRun('clients') ? '' : ` (${origin('clients')})`}: ours with a client of each library passed as \`store\`, against ` +
      'rate-limiter-flexible on the same library and against ours on ioredis.',
    '',
    clientsTable(runs, { detail: false }),
    '',
    clientsTableNote({ detail: false }),
    '',
    clientsVerdict(runs),
    '',
    `Goals: ${met} of ${goals.length} met (a goal counts only when its worst round clears it, with 0 errors and 0 ` +
      `degraded decisions). Machine: ${noisy} of ${runs.length} runs noisy (the rest of the machine used more than ` +
      `${NOISY_CORES} cores; median ${median(runs.map((r) => r.othersCores)).toFixed(2)}). Every goal, every round, Redis CPU ` +
      'per decision, p50/p99: [results/store.md](test/bench/results/store.md).',
  ].join('\n');
}

/** The client-library goals met, and how busy the machine was during that group's runs. */
function clientsVerdict(runs) {
  const goals = clientGoals(runs);
  const mine = runs.filter((r) => r.id.startsWith('clients-'));
  const noisy = mine.filter((r) => r.othersCores > NOISY_CORES).length;
  return (
    `Client-library goals (in every round, fixed window >= 3x RLF on the same library, and each library's figures >= 0.85x ` +
    `ours on ioredis): ${goals.filter((g) => g.met).length} of ${goals.length} met; ${noisy} of ${mine.length} of these runs ` +
    `were noisy (median ${median(mine.map((r) => r.othersCores)).toFixed(2)} cores used by the rest of the machine).`
  );
}
