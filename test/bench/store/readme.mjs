// The store bench's section of the repository README (between <!-- bench:store --> markers): medians and the
// per-round ratio range of the headline cases, and the goals met, with a link to the full report.
import { NOISY_CORES } from '../support/machine-noise.mjs';
import { median, roundRatios, runsOf } from '../support/rounds.mjs';
import { markdownTable } from '../support/report.mjs';
import { betterOf } from './report.mjs';

const int = (n) => (Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : '-');
const x = (n) => (Number.isFinite(n) ? `${n.toFixed(2)}x` : '-');

function cell(runs, id, ref) {
  if (!runsOf(runs, id).length) return 'n/a';
  const rate = median(runsOf(runs, id).map((r) => r.perSecond));
  if (!ref) return int(rate);
  const ratios = roundRatios(runs, id, ref);
  return `${int(rate)} (${x(median(ratios))}, ${x(Math.min(...ratios))}-${x(Math.max(...ratios))})`;
}

export function readmeSummary({ runs, goals, coalesce, commit, rounds, measureS }) {
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
  return [
    `**Store decisions/s** (\`npm run bench:store\`; commit ${commit}; ${rounds} interleaved rounds of ${measureS} s per case; ` +
      `median decisions/s, then the ratio to the peer as median and min-max over the rounds). Redis: 200 calls in flight over ` +
      `10,000 keys, ours through the whole module (ResilientStore, metrics on), RateLimiterRedis at its better ` +
      `auto-pipelining setting: ${int(median(runsOf(runs, rlf).map((r) => r.perSecond)))}/s; raw EVALSHA \`return 1\`: ` +
      `${int(median(runsOf(runs, noop).map((r) => r.perSecond)))}/s.`,
    '',
    markdownTable(['algorithm', coalesce ? 'ours, coalescing on (vs RLF)' : 'ours, module defaults (vs RLF)', 'ours, coalescing off (vs RLF)'], redisRows, [false, true, true]),
    '',
    'Memory (fixed window, the same path for both libraries; vs RateLimiterMemory):',
    '',
    markdownTable(['case', 'ours through the module', 'bare MemoryStore', 'RateLimiterMemory'], memRows, [false, true, true, true]),
    '',
    `What this harness allows a memory store: a minimal Map-based fixed window (no eviction, \`Date.now()\`, no ` +
      `validation; a reference, not a limiter) did ${cell(runs, 'mem-10k-admit-minimal', 'mem-10k-admit-rlf')} at 10k keys, all admitted.`,
    '',
    `Goals: ${met} of ${goals.length} met (a goal counts only when its worst round clears it, with 0 errors and 0 ` +
      `degraded decisions). Machine: ${noisy} of ${runs.length} runs noisy (the rest of the machine used more than ` +
      `${NOISY_CORES} cores; median ${median(runs.map((r) => r.othersCores)).toFixed(2)}). Every goal, every round, Redis CPU ` +
      'per decision, p50/p99: [results/store.md](test/bench/results/store.md).',
  ].join('\n');
}
