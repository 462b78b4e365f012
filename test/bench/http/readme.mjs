// The HTTP bench's section of the repository README (between <!-- bench:http --> markers).
import { median, roundRatios, runsOf, summary } from '../support/rounds.mjs';
import { markdownTable } from '../support/report.mjs';
import { betterThrottler, roundDifferences } from './report.mjs';

const int = (n) => (Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : '-');
const x = (n) => (Number.isFinite(n) ? `${n.toFixed(2)}x` : '-');
const us = (n) => (Number.isFinite(n) ? n.toFixed(1) : '-');

export function readmeSummary({ runs, groups, goals, rounds, measureS, localBudget }) {
  const rate = (id) => int(median(runsOf(runs, id).map((r) => r.perSecond)));
  const vsNone = (id, g) => {
    const s = summary(roundRatios(runs, id, `${g.id}-none`));
    return `${x(s.median)} (${x(s.min)}-${x(s.max)})`;
  };
  /** Median and worst (highest) round of per-round µs values. */
  const usWorst = (values) => {
    const s = summary(values);
    return `${us(s.median)} (${us(s.max)})`;
  };
  const rows = groups.map((g) => {
    const throttler = betterThrottler(runs, g.id);
    const ours = `${g.id}-ours`;
    const leased = `${g.id}-ours-budget`;
    return [
      g.adapter,
      g.variant.label,
      rate(`${g.id}-none`),
      vsNone(`${g.id}-admit-all`, g),
      vsNone(`${g.id}-admit-all-intercepted`, g),
      vsNone(`${g.id}-await-redis`, g),
      `${rate(ours)}: ${vsNone(ours, g)}`,
      runsOf(runs, leased).length ? `${rate(leased)}: ${vsNone(leased, g)}` : '-',
      `${rate(throttler)}: ${vsNone(throttler, g)}`,
      usWorst(runsOf(runs, ours).map((r) => r.redisCpuUsPerRequest)),
      usWorst(roundDifferences(runs, ours, `${g.id}-await-redis`, (r) => r.appCpuUsPerRequest)),
    ];
  });
  const met = goals.filter((g) => g.met).length;
  return [
    `**HTTP** (\`npm run bench:http\`): a Nest 12 app in its own process, \`GET /ping\`, autocannon with 64 connections, ` +
      `limits nobody reaches; ${rounds} interleaved rounds of ${measureS} s per case. Median req/s, then the ratio to the ` +
      'no-guard app as median (min-max) over the rounds; throttler at its better auto-pipelining setting. Three references: ' +
      'a global guard whose `canActivate` only returns true (what Nest charges for any guard), the same with a ' +
      'global interceptor that only passes on (what Nest charges for any interceptor; ours registers none by default), ' +
      'and a guard that only awaits one Redis `PING` on an auto-pipelined client (the floor under any guard that asks ' +
      'Redis: on Express an app that waits on Redis answers in bunches and spends less CPU per request than one that ' +
      'answers at once, so there the no-guard app is not a floor). "Ours, leased": the same rule with `localBudget: true` ' +
      `(1 client IP only${localBudget ? '' : '; not available in the build measured'}). CPU columns: median (worst round) in µs per request.`,
    '',
    markdownTable(
      ['adapter', 'clients', 'no guard', 'a guard returning true', 'and an interceptor', 'a guard awaiting a Redis PING', 'ours on Redis', 'ours, leased', '@nestjs/throttler + redis storage', 'Redis CPU µs/req, ours', 'app CPU µs/req, ours over the PING guard'],
      rows,
      [false, false, true, true, true, true, true, true, true, true, true],
    ),
    '',
    'Goals: without a lease, Redis CPU <= 5 µs per request and app CPU within 3 µs of the PING guard (worst round), ' +
      'req/s >= 0.95x the PING guard (median); leased, 1 IP: app + Redis CPU within 3 µs of the guard returning true ' +
      `(worst round), req/s >= 0.93x no guard (median); 0 non-2xx, 0 errors, 0 degraded: ${met} of ${goals.length} met. ` +
      'Every run and the machine noise: [results/http.md](test/bench/results/http.md).',
  ].join('\n');
}
