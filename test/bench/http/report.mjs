// Markdown of the HTTP bench: one row per case (medians over the rounds and their spread), every run, the goals.
import { NOISY_CORES } from '../support/machine-noise.mjs';
import { blockersOf, median, noisyRounds, roundRatios, runsOf, scoreGoal, summary } from '../support/rounds.mjs';
import { markdownTable } from '../support/report.mjs';

const int = (n) => (Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : '-');
const ms = (n) => (Number.isFinite(n) ? n.toFixed(2) : '-');
const pct = (n) => (Number.isFinite(n) ? `${(n * 100).toFixed(1)}%` : '-');
const x = (n) => (Number.isFinite(n) ? `${n.toFixed(2)}x` : '-');

export const format = { int, ms };

/** The throttler case of a group (adapter + variant) with the higher median req/s: its better setting. */
export function betterThrottler(runs, group) {
  const ids = [`${group}-throttler`, `${group}-throttler-ap`].filter((id) => runsOf(runs, id).length);
  return ids.sort((a, b) => median(runsOf(runs, b).map((r) => r.perSecond)) - median(runsOf(runs, a).map((r) => r.perSecond)))[0];
}

export function casesTable(runs, cases) {
  const headers = ['adapter', 'clients', 'case', 'req/s (median)', 'min-max', 'spread', 'vs no guard (median, min-max)', 'p50 ms', 'p99 ms', 'app CPU µs/req', 'Redis CPU µs/req', 'load generator CPU µs/req', 'machine busy (cores)', 'non-2xx', 'errors', 'degraded', 'noisy runs'];
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
      int(m((r) => r.appCpuUsPerRequest)),
      c.guard.id === 'none' ? '-' : ms(m((r) => r.redisCpuUsPerRequest) * 1),
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

/** App CPU µs per request the guard adds over no guard, per round; summarised. */
export function addedCpu(runs, id, noneId) {
  const none = new Map(runsOf(runs, noneId).map((r) => [r.round, r]));
  return summary(runsOf(runs, id).filter((r) => none.has(r.round)).map((r) => r.appCpuUsPerRequest - none.get(r.round).appCpuUsPerRequest));
}

/**
 * Per adapter and clients variant: ours >= 0.93x no guard (worst round), and the throttler's ratio reported beside
 * it; the app CPU ours adds per request.
 */
export function httpGoals(runs, groups) {
  const goals = [];
  for (const g of groups) {
    const ours = `${g.id}-ours`;
    const none = `${g.id}-none`;
    const throttler = betterThrottler(runs, g.id);
    const t = throttler ? summary(roundRatios(runs, throttler, none)) : null;
    const floor = summary(roundRatios(runs, `${g.id}-admit-all`, none));
    const redisFloor = summary(roundRatios(runs, `${g.id}-await-redis`, none));
    const vsRedisFloor = summary(roundRatios(runs, ours, `${g.id}-await-redis`));
    const cpu = addedCpu(runs, ours, none);
    const cpuOverRedisFloor = addedCpu(runs, ours, `${g.id}-await-redis`);
    goals.push(
      scoreGoal({
        label: `HTTP ${g.label}, our guard on Redis >= 0.93x the no-guard app's req/s`,
        ratios: roundRatios(runs, ours, none),
        threshold: 0.93,
        blockers: [...blockersOf(runs, ours), ...blockersOf(runs, none)],
        noisy: noisyRounds(runs, [ours, none]),
        detail:
          (t ? `throttler+redis (${throttler.endsWith('-ap') ? 'auto-pipelining on' : 'auto-pipelining off'}, its better setting): ${x(t.median)} (${x(t.min)}-${x(t.max)}) of no guard; ` : '') +
          `a guard that only returns true: ${x(floor.median)} (${x(floor.min)}-${x(floor.max)}); ` +
          `a guard that only awaits a Redis PING: ${x(redisFloor.median)} (${x(redisFloor.min)}-${x(redisFloor.max)}), ours ${x(vsRedisFloor.median)} (${x(vsRedisFloor.min)}-${x(vsRedisFloor.max)}) of it; ` +
          `app CPU our guard adds: ${int(cpu.median)} µs/request (rounds ${int(cpu.min)} to ${int(cpu.max)}), ` +
          `${int(cpuOverRedisFloor.median)} over the PING guard's (rounds ${int(cpuOverRedisFloor.min)} to ${int(cpuOverRedisFloor.max)})`,
      }),
    );
  }
  return goals;
}
