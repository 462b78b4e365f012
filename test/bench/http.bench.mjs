// HTTP benchmark: what a rate-limit guard costs a real NestJS 12 app (Express) under load. One route, `GET /ping`
// answering "ok", served by a fresh app process per case, loaded by autocannon (programmatic API) from this
// process; a redis-server started by the bench on a free port (never the shared one on 6379) holds the counters.
//
// Cases: no guard; our RateLimitModule.forRoot({ globalGuard: true, defaultRule: { limit: 1e9, window: '1m',
// algorithm } }) with sliding-window and with sliding-log; @nestjs/throttler 6 (ThrottlerGuard as APP_GUARD)
// with @nest-lab/throttler-storage-redis, { ttl: 60000, limit: 1e9 }. Both limiters get an ioredis client made
// the same way (default options). Limits are huge, so every request is admitted: this is the cost of a decision.
// Two variants: "1 IP" (autocannon's single address, so one key) and "10k IPs" (each request carries an
// X-Forwarded-For from a pool of 10,000 addresses; Express `trust proxy` on, so req.ip, which both guards use,
// is that address). Every case runs BENCH_HTTP_RUNS times (default 2), interleaved (A B C D A B C D) so drift
// and noise on the machine show as a spread between runs; the report lists each run and the mean.
//
// Why a child process for the app: autocannon spends 50-90 µs of CPU per request, and inside the app's process it
// would run on the app's event loop, so every case would carry that constant cost and the guards' differences
// would shrink; in a process of its own the app's CPU per request is also measurable on its own (/proc). On a
// 2-core machine in-process runs reached similar req/s (fewer context switches), with ratios no more telling.
//
// Run: `npm run bench:http` (builds first) or `node test/bench/http.bench.mjs` after `npm run build`.
// Settings (env): BENCH_SECONDS measured seconds per run (default 10), BENCH_WARMUP_SECONDS (default 3),
// BENCH_HTTP_CONNECTIONS (64), BENCH_HTTP_RUNS (2), BENCH_HTTP_CASES (comma list of case ids to run, e.g.
// "none,sw,throttler"; ids: none, sw, sl, throttler and the extras), BENCH_HTTP_VARIANTS ("one-ip,ip-pool"),
// BENCH_HTTP_EXTRA=1 (adds diagnostic cases: "sw-timeout1s" / "sl-timeout1s" = ours with timeoutMs: 1000, so
// every decision is made in Redis; "sw-noheaders" = ours sliding-window with headers: false,
// "sw-autopipe" / "throttler-autopipe" = the ioredis client with auto-pipelining on), BENCH_HTTP_INPROCESS=1 (the
// app runs inside the bench process, sharing autocannon's event loop; for comparison only),
// BENCH_HTTP_CPU_PROF=<dir> (app processes run with --cpu-prof, one .cpuprofile per run in <dir>),
// BENCH_HTTP_QUIET_WAIT_S (default 60; 0 = don't wait): before each run, wait up to that long for the rest of the
// machine to use less than 0.3 cores (sampled over 2 s), since other builds and tests on a shared box swamp the
// differences measured here; the report shows, per run, how much CPU the rest of the machine used anyway.
// Writes test/bench/results/http.md for the default set only (not with filters, extras or in-process: then stdout).
import { mkdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import { resolve } from 'node:path';
import { Redis } from 'ioredis';
import { envInteger, environmentHeader, measuredMs, packageVersion, runMain, startGuardedServer, writeResult } from './support/environment.mjs';
import { goalsSection } from './support/report.mjs';
import { startAppInProcess, startAppProcess } from './http/app-process.mjs';
import { runLoad } from './http/load.mjs';
import { HUGE_LIMIT } from './http/server.mjs';
import { evaluateGoals, format, runsTable, summarise, summaryTable } from './http/report.mjs';

const MEASURE_S = measuredMs(10) / 1000;
const WARMUP_S = envInteger('BENCH_WARMUP_SECONDS', 3);
const CONNECTIONS = envInteger('BENCH_HTTP_CONNECTIONS', 64);
const RUNS = envInteger('BENCH_HTTP_RUNS', 2);
const IP_POOL = 10_000;
const QUIET_WAIT_S = Number(process.env.BENCH_HTTP_QUIET_WAIT_S ?? 60);
const QUIET_CORES = 0.3;
const IN_PROCESS = process.env.BENCH_HTTP_INPROCESS === '1';
const CPU_PROF_DIR = process.env.BENCH_HTTP_CPU_PROF ? resolve(process.env.BENCH_HTTP_CPU_PROF) : undefined;

const VARIANTS = [
  { id: 'one-ip', label: '1 IP', trustProxy: false, ipPool: 0 },
  { id: 'ip-pool', label: '10k IPs (XFF)', trustProxy: true, ipPool: IP_POOL },
];

const GUARDS = [
  { id: 'none', kind: 'none', label: 'no guard', config: { guard: 'none' } },
  { id: 'sw', kind: 'ours', goal: true, label: 'ours sliding-window', config: { guard: 'ours', algorithm: 'sliding-window' } },
  { id: 'sl', kind: 'ours', goal: true, label: 'ours sliding-log', config: { guard: 'ours', algorithm: 'sliding-log' } },
  { id: 'throttler', kind: 'throttler', label: 'throttler+redis', config: { guard: 'throttler' } },
  // Diagnostics (BENCH_HTTP_EXTRA=1): ours with every decision made in Redis (a 1 s timeout instead of the default
  // 50 ms, past which the memory fallback decides), what the headers cost, what ioredis auto-pipelining does.
  { id: 'sw-timeout1s', kind: 'ours', extra: true, label: 'ours sliding-window, timeoutMs: 1000', config: { guard: 'ours', algorithm: 'sliding-window', timeoutMs: 1000 } },
  { id: 'sl-timeout1s', kind: 'ours', extra: true, label: 'ours sliding-log, timeoutMs: 1000', config: { guard: 'ours', algorithm: 'sliding-log', timeoutMs: 1000 } },
  { id: 'sw-noheaders', kind: 'ours', extra: true, label: 'ours sliding-window, headers: false', config: { guard: 'ours', algorithm: 'sliding-window', headers: false } },
  { id: 'sw-autopipe', kind: 'ours', extra: true, label: 'ours sliding-window, auto-pipelining', config: { guard: 'ours', algorithm: 'sliding-window', autoPipelining: true } },
  { id: 'throttler-autopipe', kind: 'throttler', extra: true, label: 'throttler+redis, auto-pipelining', config: { guard: 'throttler', autoPipelining: true } },
];

function selected(list, envName, includeExtra = true) {
  const raw = process.env[envName];
  if (!raw) return list.filter((item) => includeExtra || !item.extra);
  const ids = raw.split(',').map((s) => s.trim());
  const unknown = ids.filter((id) => !list.some((item) => item.id === id));
  if (unknown.length) throw new Error(`${envName}: unknown id(s) ${unknown.join(', ')}; known: ${list.map((i) => i.id).join(', ')}`);
  return list.filter((item) => ids.includes(item.id));
}

const variants = selected(VARIANTS, 'BENCH_HTTP_VARIANTS');
const guards = selected(GUARDS, 'BENCH_HTTP_CASES', process.env.BENCH_HTTP_EXTRA === '1');
const fullRun = !process.env.BENCH_HTTP_CASES && !process.env.BENCH_HTTP_VARIANTS && !IN_PROCESS && process.env.BENCH_HTTP_EXTRA !== '1';

/** Redis's own CPU seconds (user + sys), from INFO cpu. */
async function redisCpuSeconds(admin) {
  const info = await admin.info('cpu');
  const read = (field) => Number(new RegExp(`^${field}:([\\d.]+)`, 'm').exec(info)?.[1] ?? NaN);
  return read('used_cpu_user') + read('used_cpu_sys');
}

/** Calls and µs inside Redis of EVAL + EVALSHA since the last CONFIG RESETSTAT (INFO commandstats). */
async function scriptStats(admin) {
  const info = await admin.info('commandstats');
  let calls = 0;
  let usec = 0;
  for (const match of info.matchAll(/^cmdstat_(?:eval|evalsha):calls=(\d+),usec=(\d+)/gm)) {
    calls += Number(match[1]);
    usec += Number(match[2]);
  }
  return { calls, usecPerCall: calls === 0 ? NaN : usec / calls };
}

/** Busy and total CPU seconds of the whole machine since boot, from /proc/stat (Linux); NaN elsewhere. */
function machineCpuSeconds() {
  try {
    const [, ...ticks] = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/);
    const values = ticks.map(Number);
    const total = values.reduce((a, b) => a + b, 0);
    const idle = values[3] + (values[4] ?? 0); // idle + iowait
    return { busy: (total - idle) / 100, total: total / 100 };
  } catch {
    return { busy: NaN, total: NaN };
  }
}

/**
 * Waits (up to BENCH_HTTP_QUIET_WAIT_S) until the machine has been below QUIET_CORES busy for a 2 s sample, so
 * a run does not start in the middle of someone else's build; gives up quietly and lets the report show the noise.
 * Returns the seconds waited.
 */
async function waitForQuiet() {
  const started = Date.now();
  while (Date.now() - started < QUIET_WAIT_S * 1000) {
    const before = machineCpuSeconds();
    await new Promise((done) => setTimeout(done, 2000));
    const after = machineCpuSeconds();
    const cores = ((after.busy - before.busy) / (after.total - before.total)) * os.cpus().length;
    if (!(cores >= QUIET_CORES)) break;
  }
  return (Date.now() - started) / 1000;
}

const ownCpuSeconds = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1e6;
};

/**
 * One request before the load: the guard must answer 200 with its own headers, or the case would measure
 * something else than it claims (a guard that is not installed, a storage that is not used).
 */
async function checkGuardAnswers(port, guard, variant) {
  const headers = variant.ipPool > 0 ? { 'x-forwarded-for': '192.0.2.1' } : {};
  const response = await fetch(`http://127.0.0.1:${port}/ping`, { headers });
  await response.text();
  const expected = { none: null, ours: 'ratelimit-policy', throttler: 'x-ratelimit-limit' }[guard.kind];
  const expectHeader = guard.config.headers === false ? null : expected;
  if (response.status !== 200) throw new Error(`${guard.label}: check request answered ${response.status}`);
  if (expectHeader && !response.headers.has(expectHeader)) throw new Error(`${guard.label}: check response has no ${expectHeader} header`);
}

async function runCase({ variant, guard, run, redisPort, admin }) {
  const config = { ...guard.config, trustProxy: variant.trustProxy, redisPort };
  const name = `${variant.id}-${guard.id}-run${run}`;
  const waitedS = QUIET_WAIT_S > 0 ? await waitForQuiet() : 0;
  const app = IN_PROCESS
    ? await startAppInProcess(config)
    : await startAppProcess(config, CPU_PROF_DIR ? { cpuProfile: { dir: CPU_PROF_DIR, name: `${name}.cpuprofile` } } : {});
  try {
    await checkGuardAnswers(app.port, guard, variant);
    const loadAverage = os.loadavg()[0];
    await runLoad({ port: app.port, seconds: WARMUP_S, connections: CONNECTIONS, ipPool: variant.ipPool });
    await admin.config('RESETSTAT');
    await app.resetStats();
    const appCpuBefore = app.cpuSeconds();
    const redisCpuBefore = await redisCpuSeconds(admin);
    const benchCpuBefore = ownCpuSeconds();
    const machineBefore = machineCpuSeconds();
    const result = await runLoad({ port: app.port, seconds: MEASURE_S, connections: CONNECTIONS, ipPool: variant.ipPool });
    const machineAfter = machineCpuSeconds();
    const benchCpu = ownCpuSeconds() - benchCpuBefore;
    const appCpu = app.cpuSeconds() - appCpuBefore;
    const redisCpu = (await redisCpuSeconds(admin)) - redisCpuBefore;
    // CPU the rest of the machine used meanwhile, in cores: the noise this run competed with.
    const elapsedS = ((machineAfter.total - machineBefore.total) / os.cpus().length) || NaN;
    const ours = (IN_PROCESS ? 0 : appCpu) + redisCpu + benchCpu;
    const othersCores = (machineAfter.busy - machineBefore.busy - ours) / elapsedS;
    const redisKeys = await admin.dbsize();
    const scripts = await scriptStats(admin);
    const decisions = await app.stats();
    if (guard.kind !== 'none' && redisKeys === 0) throw new Error(`${guard.label}: the run left no key in Redis, so its storage was not used`);
    return {
      ...result,
      variant,
      guard,
      run,
      redisKeys,
      loadAverage,
      waitedS,
      degraded: decisions.degraded,
      storeErrors: decisions.storeErrors,
      scriptUsPerCall: scripts.usecPerCall,
      scriptCallsPerRequest: scripts.calls / result.requests,
      othersCores: Math.max(0, othersCores),
      benchCpuUsPerRequest: (benchCpu * 1e6) / result.requests,
      appCpuUsPerRequest: (appCpu * 1e6) / result.requests,
      redisCpuUsPerRequest: (redisCpu * 1e6) / result.requests,
    };
  } finally {
    await app.stop();
    await admin.flushall();
  }
}

function logRun(index, total, r) {
  process.stderr.write(
    `[${index}/${total}] ${r.variant.label}, ${r.guard.label}, run ${r.run}: ${format.int(r.perSecond)} req/s, ` +
      `p50 ${format.ms(r.p50)} ms, p99 ${format.ms(r.p99)} ms, non-2xx ${r.non2xx}, errors ${r.errors + r.timeouts}, ` +
      `app CPU ${format.int(r.appCpuUsPerRequest)} µs/req, redis CPU ${format.int(r.redisCpuUsPerRequest)} µs/req, script ${format.ms(r.scriptUsPerCall)} µs/call, keys ${r.redisKeys}, degraded ${r.degraded}, ` +
      `others' CPU ${r.othersCores.toFixed(2)} cores${r.waitedS > 3 ? ` (waited ${r.waitedS.toFixed(0)} s for quiet)` : ''}\n`,
  );
}

function renderReport(redisVersion, runs, startedAt) {
  const summary = summarise(runs, variants, guards, QUIET_CORES);
  const order = guards.map((g) => g.id).join(' ');
  const header = environmentHeader('HTTP benchmark', redisVersion, [
    `Started: ${startedAt}`,
    `HTTP: NestJS ${packageVersion('@nestjs/core')} on @nestjs/platform-express ${packageVersion('@nestjs/platform-express')} ` +
      `(express ${packageVersion('express')}); load: autocannon ${packageVersion('autocannon')}`,
    `App: ${IN_PROCESS ? 'inside the bench process (shares the event loop with autocannon)' : 'a fresh child process per run (node test/bench/http/server.mjs)'}; ` +
      'one route GET /ping answering "ok"; limiters get an ioredis client with default options (auto-pipelining off)',
    `Rules: limit ${HUGE_LIMIT.toExponential()} per 60 s, so every request is admitted (non-2xx should be 0); ` +
      `ours with its default headers (draft RateLimit/RateLimit-Policy), throttler with its default X-RateLimit-*`,
    `Load: ${CONNECTIONS} connections, pipelining 1; per run ${WARMUP_S} s warm-up (discarded), then ${MEASURE_S} s measured ` +
      '(BENCH_SECONDS); latency per response from autocannon\'s response event (sub-ms), req/s = responses / measured time',
    `Variants: "1 IP" = autocannon's own address (one key per limiter); "10k IPs (XFF)" = each request carries ` +
      `X-Forwarded-For from a pool of ${IP_POOL.toLocaleString('en-US')} addresses, Express trust proxy on`,
    `Before each run the bench waits up to ${QUIET_WAIT_S} s for the rest of the machine to drop below ${QUIET_CORES} busy cores (BENCH_HTTP_QUIET_WAIT_S)`,
    `Order: ${RUNS} rounds, each round every variant with the cases in the order ${order} (interleaved, ` +
      'not back to back); FLUSHALL after every run',
    'CPU columns: app process user+sys CPU (from /proc) and redis-server CPU (INFO cpu) over the measured period, per ' +
      'response; "script µs/call" = Redis\'s own time per EVAL/EVALSHA (INFO commandstats, reset after the warm-up); "others\' CPU" = CPU the rest of the machine (not the app, redis-server or autocannon) used during the ' +
      'measured period, in cores (from /proc/stat): the noise a run competed with; "load 1m" = load average at its start',
  ]);
  const notes = [
    '"degraded" counts decisions of our guard that the failure policy made instead of Redis (its metrics: Redis did ' +
      'not answer within timeoutMs, default 50 ms, or the circuit breaker was open); those requests were limited by ' +
      'the per-process memory fallback. "script calls/req" below 1 means requests that never reached Redis.',
    `"quiet runs" = the runs during which the rest of the machine used less than ${QUIET_CORES} cores ("others' CPU" below).`,
    '"vs no guard" and "vs throttler+redis" divide mean req/s within the same variant. p50/p99 are the mean of the ' +
      "runs' percentiles. The machine is shared (other benches and tests may run at the same time); compare " +
      'within one report, and read the spread between runs before trusting a ratio.',
  ];
  return [
    header,
    '',
    '## Summary',
    '',
    summaryTable(summary, RUNS),
    '',
    ...notes,
    '',
    '## Every run',
    '',
    runsTable(runs),
    '',
    goalsSection(evaluateGoals(summary)),
    '',
  ].join('\n');
}

async function main() {
  const startedAt = new Date().toISOString();
  if (CPU_PROF_DIR) mkdirSync(CPU_PROF_DIR, { recursive: true });
  const { server, version } = await startGuardedServer();
  const admin = new Redis({ host: '127.0.0.1', port: server.port });
  const plan = [];
  for (let run = 1; run <= RUNS; run++) for (const variant of variants) for (const guard of guards) plan.push({ variant, guard, run });
  const runs = [];
  try {
    for (const [i, step] of plan.entries()) {
      const result = await runCase({ ...step, redisPort: server.port, admin });
      runs.push(result);
      logRun(i + 1, plan.length, result);
    }
  } finally {
    await admin.quit().catch(() => admin.disconnect());
    await server.stop();
  }
  const report = renderReport(version, runs, startedAt);
  process.stdout.write(`\n${report}`);
  if (fullRun) writeResult('http.md', report);
  else process.stderr.write('Cases, variants or mode filtered: results/http.md left as it was.\n');
  if (CPU_PROF_DIR) process.stderr.write(`CPU profiles in ${CPU_PROF_DIR}\n`);
}

runMain('http bench', main);
