// Hot-key benchmark: one key, PROCESSES app processes (hotkey/child.mjs: a Nest application context on the BUILT
// package each, deciding through RateLimitService.decide, the guard's path), on one redis-server and on a 3-master
// Cluster; closed loops of IN_FLIGHT per process. Cases, interleaved over rounds (support/rounds.mjs):
// - under the limit (every call admitted: fixed window, 50,000,000 per 60 s): exact decisions against a local budget
//   (`localBudget: { maxUnits: 10,000 }`): decisions/s, Redis CPU and the apps' CPU per decision; each with loops that
//   yield a turn of the event loop per decision (as HTTP requests) and closed loops that do not (as the store bench);
// - over the limit (fixed window, 20,000 per 1 s, far below what the loops ask): exact against a local budget
//   (`localBudget: true`: takes of up to 1% of the limit, 200). Every admission is placed in its window by the
//   process's own clock reads around its decision, not by the decision (hotkey/child.mjs; support/admission-windows
//   logic): no window may hold more than the limit; the full windows' shortfall (limit - admitted) is what units held
//   by instances cost, bounded by PROCESSES x maxUnits (the README's bound).
// Each case runs once, unrecorded, before round 1 (V8 compiles the children's code).
// Goals: decisions/s with local budgets >= 10x exact on the same key, worst round, on each topology; 0 over-admission
// in every window of every run; shortfall within the bound in every full window.
// Run: `npm run bench:hotkey` (builds first). Env: BENCH_SECONDS (measured per run, default 3), BENCH_ROUNDS (5),
// HOTKEY_PROCESSES (4), HOTKEY_IN_FLIGHT (200), HOTKEY_TOPOLOGIES (redis,cluster). Writes test/bench/results/hotkey.md.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { envInteger, environmentHeader, measuredMs, runMain, startGuardedServer, writeResult } from './support/environment.mjs';
import { NOISY_CORES, startNoiseMeter } from './support/machine-noise.mjs';
import { redisPid, startRedisAccounting } from './support/redis-stats.mjs';
import { startBenchCluster } from './support/redis-cluster.mjs';
import { markdownTable } from './support/report.mjs';
import { benchRounds, goalsMarkdown, runRounds, runsOf, scoreRounds, summary } from './support/rounds.mjs';

const CHILD = fileURLToPath(new URL('./hotkey/child.mjs', import.meta.url));
const PROCESSES = envInteger('HOTKEY_PROCESSES', 4);
const IN_FLIGHT = envInteger('HOTKEY_IN_FLIGHT', 200);
const MEASURE_MS = measuredMs(3);
const WARMUP_MS = 500;
const ROUNDS = benchRounds();
const TOPOLOGIES = (process.env.HOTKEY_TOPOLOGIES ?? 'redis,cluster').split(',').map((s) => s.trim());
const UNDER = { algorithm: 'fixed-window', limit: 50_000_000, window: 60_000 };
const OVER = { algorithm: 'fixed-window', limit: 20_000, window: 1_000 };
const UNDER_UNITS = 10_000;
/** `localBudget: true` takes 1% of the limit at most. */
const OVER_UNITS = OVER.limit / 100;
const RULES = {
  under: UNDER,
  underLocal: { ...UNDER, localBudget: { maxUnits: UNDER_UNITS } },
  over: OVER,
  overLocal: { ...OVER, localBudget: true },
};
const BOUND = PROCESSES * OVER_UNITS;

const CASES = TOPOLOGIES.flatMap((topology) => [
  { id: `${topology}-under-exact`, topology, rule: 'under', label: `${topology}: under the limit, exact, a turn per decision`, witness: false },
  { id: `${topology}-under-local`, topology, rule: 'underLocal', label: `${topology}: under the limit, local budget (maxUnits ${UNDER_UNITS.toLocaleString('en-US')}), a turn per decision`, witness: false },
  { id: `${topology}-under-exact-loop`, topology, rule: 'under', label: `${topology}: under the limit, exact, closed loop`, witness: false, yieldEach: false },
  { id: `${topology}-under-local-loop`, topology, rule: 'underLocal', label: `${topology}: under the limit, local budget (maxUnits ${UNDER_UNITS.toLocaleString('en-US')}), closed loop`, witness: false, yieldEach: false },
  { id: `${topology}-over-exact`, topology, rule: 'over', label: `${topology}: over the limit (${OVER.limit.toLocaleString('en-US')}/s), exact`, witness: true },
  { id: `${topology}-over-local`, topology, rule: 'overLocal', label: `${topology}: over the limit (${OVER.limit.toLocaleString('en-US')}/s), local budget (maxUnits ${OVER_UNITS})`, witness: true },
  // What the harness allows (not a limiter, not scored): the same loops with a decide that only returns a resolved promise.
  { id: `${topology}-loop-only`, topology, rule: 'under', label: `${topology}: reference, the closed loops alone (a decide that only resolves)`, witness: false, yieldEach: false, noop: true },
]);

/** A child process and a way to send it a command and read its one-line reply. */
function startChild(store, prefix) {
  const child = spawn(process.execPath, [CHILD, JSON.stringify(store), JSON.stringify(RULES), prefix], { stdio: ['pipe', 'pipe', 'inherit'], env: { ...process.env, NODE_OPTIONS: '' } });
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const next = async () => {
    const { value, done } = await lines.next();
    if (done) throw new Error(`hot-key child ended (code ${child.exitCode}, signal ${child.signalCode})`);
    return value;
  };
  return {
    pid: child.pid,
    ready: next(),
    async ask(command) {
      child.stdin.write(JSON.stringify(command) + '\n');
      return JSON.parse(await next());
    },
    async stop() {
      child.stdin.write(JSON.stringify({ exit: true }) + '\n');
      await new Promise((resolve) => (child.exitCode === null ? child.once('close', resolve) : resolve()));
    },
  };
}

/**
 * Admissions per window, from the children's counts of those whose clock reads lay in one window and the brackets of
 * the others, each placed in the earliest window it reaches that is not full (a placement within the limit is found
 * whenever one exists): { counts, max, straddling }.
 */
function perWindow(results, windowMs, limit) {
  const counts = new Map();
  for (const r of results) for (const [w, n] of r.definite) counts.set(w, (counts.get(w) ?? 0) + n);
  const spans = results.flatMap((r) => r.straddling.map(([before, after]) => ({ first: Math.floor(before / windowMs), last: Math.floor(after / windowMs) })));
  spans.sort((a, b) => a.last - b.last || a.first - b.first);
  for (const { first, last } of spans) {
    let w = first;
    while (w < last && (counts.get(w) ?? 0) >= limit) w++;
    counts.set(w, (counts.get(w) ?? 0) + 1);
  }
  return { counts, max: Math.max(0, ...counts.values()), straddling: spans.length };
}

async function main() {
  const { server, version } = await startGuardedServer();
  const topologies = {};
  const cluster = TOPOLOGIES.includes('cluster') ? await startBenchCluster({ masters: 3 }) : undefined;
  try {
    if (TOPOLOGIES.includes('redis')) {
      const admin = new Redis(server.port, '127.0.0.1');
      topologies.redis = { store: `redis://127.0.0.1:${server.port}`, admins: [admin], pids: [await redisPid(admin)] };
    }
    if (cluster) topologies.cluster = { store: { cluster: cluster.nodes }, admins: cluster.admins, pids: cluster.pids };
    for (const [name, topology] of Object.entries(topologies)) {
      topology.children = Array.from({ length: PROCESSES }, (_, i) => startChild(topology.store, `hot-${name}-${process.pid}`));
      await Promise.all(topology.children.map((c) => c.ready));
    }
    process.stderr.write(`hot-key bench: ${CASES.length} cases x ${ROUNDS} rounds, ${PROCESSES} processes x ${IN_FLIGHT} in flight\n`);
    // Each case once, unrecorded, so that no case of round 1 pays for V8 compiling the children's code.
    for (const c of CASES) await runCase(topologies[c.topology], c, 0);
    const runs = await runRounds({
      rounds: ROUNDS,
      cases: CASES,
      runCase: (c, round) => runCase(topologies[c.topology], c, round),
      log: (run, done, total) =>
        process.stderr.write(
          `[${done}/${total}] round ${run.round} ${run.id}: ${Math.round(run.perSecond).toLocaleString('en-US')}/s, redis ${run.redisUsPerDecision.toFixed(2)} µs/dec, apps ${run.appUsPerDecision.toFixed(2)} µs/dec, admitted ${run.admitted}, errors ${run.errors}, degraded ${run.degraded}${run.windows ? `, max/window ${run.windows.max}, shortfall ${run.windows.shortfall}` : ''}, others ${run.noiseCores.toFixed(2)} cores\n`,
        ),
    });
    const report = buildReport(runs, version);
    writeResult('hotkey.md', report);
  } finally {
    for (const topology of Object.values(topologies)) {
      await Promise.all((topology.children ?? []).map((c) => c.stop().catch(() => undefined)));
      if (topology === topologies.redis) for (const admin of topology.admins) admin.disconnect();
    }
    await cluster?.stop();
    await server.stop?.();
  }
}

async function runCase(topology, c, round) {
  const key = `k-${c.id}-${round}`;
  const noise = startNoiseMeter(() => [process.pid, ...topology.pids, ...topology.children.map((child) => child.pid)]);
  const startAt = Date.now() + 100;
  const accounting = await new Promise((resolve) => setTimeout(() => resolve(startRedisAccounting(topology.admins)), Math.max(0, startAt + WARMUP_MS - Date.now())));
  const asked = topology.children.map((child) => child.ask({ rule: c.rule, key, inFlight: IN_FLIGHT, startAt, warmupMs: WARMUP_MS, measureMs: MEASURE_MS, windowMs: OVER.window, witness: c.witness, yieldEach: c.yieldEach ?? true, noop: c.noop ?? false }));
  const results = await Promise.all(asked);
  const redis = await (await accounting).finish();
  const noiseCores = noise.stop().othersCores;
  const sum = (field) => results.reduce((s, r) => s + r[field], 0);
  const decisions = sum('decisions');
  const run = {
    perSecond: decisions / (MEASURE_MS / 1000),
    decisions,
    admitted: sum('admitted'),
    refused: sum('refused'),
    degraded: sum('degraded'),
    errors: sum('errors'),
    redisUsPerDecision: (redis.cpuSeconds * 1e6) / Math.max(1, decisions),
    scriptCallsPerDecision: redis.scriptCalls / Math.max(1, decisions),
    appUsPerDecision: sum('cpuUs') / Math.max(1, decisions),
    noiseCores,
  };
  if (c.witness) {
    const windows = perWindow(results, OVER.window, OVER.limit);
    const from = startAt + WARMUP_MS;
    const until = from + MEASURE_MS;
    const full = [];
    for (let w = Math.ceil(from / OVER.window); (w + 1) * OVER.window <= until; w++) full.push(w);
    const shortfall = Math.max(0, ...full.map((w) => OVER.limit - (windows.counts.get(w) ?? 0)));
    run.windows = { max: windows.max, straddling: windows.straddling, full: full.length, shortfall, admittedPerFullWindow: full.map((w) => windows.counts.get(w) ?? 0) };
  }
  return run;
}

function buildReport(runs, version) {
  const fmt = (n) => Math.round(n).toLocaleString('en-US');
  const rows = CASES.map((c) => {
    const mine = runsOf(runs, c.id);
    const s = summary(mine.map((r) => r.perSecond));
    const med = (f) => summary(mine.map(f)).median;
    return [
      c.label,
      fmt(s.median),
      `${fmt(s.min)}-${fmt(s.max)}`,
      med((r) => r.redisUsPerDecision).toFixed(2),
      med((r) => r.scriptCallsPerDecision).toFixed(4),
      med((r) => r.appUsPerDecision).toFixed(2),
      c.witness ? String(Math.max(...mine.map((r) => r.windows.max))) : '-',
      c.witness ? String(Math.max(...mine.map((r) => r.windows.shortfall))) : '-',
      String(mine.reduce((n, r) => n + r.errors + r.degraded, 0)),
      `${mine.filter((r) => r.noiseCores > NOISY_CORES).length}/${mine.length}`,
    ];
  });
  const goals = [];
  for (const topology of TOPOLOGIES) {
    for (const [suffix, how] of [
      ['-loop', 'closed loops, as the store bench'],
      ['', 'a turn of the event loop per decision, as HTTP requests'],
    ]) {
      const exact = runsOf(runs, `${topology}-under-exact${suffix}`);
      const local = runsOf(runs, `${topology}-under-local${suffix}`);
      const ratios = local.map((r) => r.perSecond / exact.find((e) => e.round === r.round).perSecond);
      const redisRatios = local.map((r) => exact.find((e) => e.round === r.round).redisUsPerDecision / Math.max(1e-9, r.redisUsPerDecision));
      const blockers = [...exact, ...local].some((r) => r.errors || r.degraded) ? ['errors or degraded decisions'] : [];
      // The closed loops alone, over exact, in the same round: the most any decide could reach here.
      const loopOnly = suffix === '-loop' ? runsOf(runs, `${topology}-loop-only`) : [];
      const ceiling = loopOnly.length > 0 ? `; the closed loops alone (a decide that only resolves) over exact: median ${summary(loopOnly.map((r) => r.perSecond / exact.find((e) => e.round === r.round).perSecond)).median.toFixed(1)}x` : '';
      goals.push(
        scoreRounds({
          label: `${topology}: one key under the limit (${how}), decisions/s with local budgets >= 10x exact`,
          values: ratios,
          threshold: 10,
          blockers,
          detail: `Redis CPU per decision, exact over local budgets: median ${summary(redisRatios).median.toFixed(0)}x${ceiling}`,
        }),
      );
    }
    for (const mode of ['exact', 'local']) {
      const over = runsOf(runs, `${topology}-over-${mode}`);
      goals.push(
        scoreRounds({
          label: `${topology}: one key over the limit, ${mode === 'local' ? 'local budgets' : 'exact'}: admitted in any window (placed by clock reads around each decision) <= the limit (${fmt(OVER.limit)})`,
          values: over.map((r) => r.windows.max),
          threshold: OVER.limit,
          atLeast: false,
          unit: 'count',
          detail: `windows' admissions with a bracket across a window's end: ${over.map((r) => r.windows.straddling).join(', ')}`,
        }),
      );
    }
    const overLocal = runsOf(runs, `${topology}-over-local`);
    goals.push(
      scoreRounds({
        label: `${topology}: one key over the limit, local budgets: shortfall (limit - admitted) in any full window <= ${PROCESSES} processes x ${OVER_UNITS} units (${BOUND})`,
        values: overLocal.map((r) => r.windows.shortfall),
        threshold: BOUND,
        atLeast: false,
        unit: 'count',
        detail: `admitted per full window: ${overLocal.map((r) => r.windows.admittedPerFullWindow.join('/')).join(', ')}`,
      }),
    );
  }
  return [
    environmentHeader('Hot-key benchmark', version, [
      `${PROCESSES} app processes x ${IN_FLIGHT} closed loops on ONE key; RateLimitService.decide (the guard's path, block cache on); ${MEASURE_MS / 1000} s measured after ${WARMUP_MS} ms per run; ${ROUNDS} rounds, cases interleaved, each case run once unrecorded before round 1`,
      'A turn per decision: each loop yields to the event loop (setImmediate) after each decision, as requests read from sockets do; closed loop: each loop decides again at once, as the store bench\'s loops (support/load.mjs)',
      `Rules: under the limit, fixed window ${fmt(UNDER.limit)} per ${UNDER.window / 1000} s; over the limit, fixed window ${fmt(OVER.limit)} per ${OVER.window / 1000} s. Failure policy 'closed', timeoutMs 5,000: only Redis admits`,
    ]),
    '',
    '## Cases',
    '',
    'Medians over the rounds. Redis CPU: used_cpu_user + used_cpu_sys of every node over the measured period, per decision; apps: the app processes\' CPU per decision. Max/window: the most admissions any window held (each placed by the clock reads around its decision); shortfall: the largest limit - admitted of a full window.',
    '',
    markdownTable(['case', 'decisions/s', 'min-max', 'Redis CPU µs/decision', 'script calls/decision', 'apps CPU µs/decision', 'max/window', 'shortfall', 'errors+degraded', 'noisy runs'], rows, [1, 2, 3, 4, 5, 6, 7, 8]),
    '',
    goalsMarkdown(goals, '## Goals', 'Each goal is scored on every round (worst round): ratios within a round, counts per run.'),
    '',
    '## Every run',
    '',
    markdownTable(
      ['case', ...Array.from({ length: ROUNDS }, (_, i) => `round ${i + 1}`)],
      CASES.map((c) => [c.label, ...runsOf(runs, c.id).map((r) => `${fmt(r.perSecond)} (${r.noiseCores.toFixed(2)})`)]),
      Array.from({ length: ROUNDS }, (_, i) => i + 1),
    ),
    '',
  ].join('\n');
}

runMain('hot-key bench', main);
