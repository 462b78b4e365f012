// HTTP benchmark: what a rate-limit guard costs a real NestJS 12 app, on Express and on Fastify. One route,
// `GET /ping` answering "ok" (the cheapest route there is, so the guard's share is as large as it can be), served
// by an app in a child process of its own (autocannon spends 50-90 µs of CPU per request; in the app's process it
// would run on the app's event loop), loaded by autocannon from this process, 64 connections; a redis-server
// started by the bench on a free port holds the counters.
//
// Cases, per adapter: no guard; a global guard whose canActivate only returns true (what Nest itself charges for
// running a guard, the floor under any guard); a global guard that only awaits one Redis PING on an auto-pipelined
// client (the floor under any guard that asks Redis: on Express, an app that waits on Redis spends less CPU per
// request than one that answers at once, so no guard is no floor there); our RateLimitModule.forRoot({ store: <ioredis client>, globalGuard: true,
// defaultRule: { limit: 1e9, window: '1m' } }) (sliding window, the default algorithm; every other option at its
// default, coalescing included when the build has it); the same with `localBudget: true` on the rule (each app takes
// units of the key's budget ahead and spends them locally), with 1 client IP only, and only when the build has
// the option (detected: defineRule accepts the rule; otherwise reported "not available in this build"); @nestjs/throttler 6
// (ThrottlerGuard as APP_GUARD) with @nest-lab/throttler-storage-redis, { ttl: 60000, limit: 1e9 }, its client with
// auto-pipelining off and on (scored at its better setting). Limits are huge: every request is admitted, so this
// is the cost of a decision. Clients: "1 IP" (autocannon's one address) and "10k IPs" (X-Forwarded-For from a
// pool of 10,000, trust proxy on). Every app is started once and serves both client variants.
//
// Method: each app loaded for 2 s per client variant once it has started (its JIT warm before round 1); every
// case once per round, BENCH_ROUNDS rounds (default 5), the order rotated each round; per run 1 s warm-up, then
// BENCH_SECONDS (default 3) measured. Per run: req/s, the app's CPU per request (process.cpuUsage() inside it, user
// + system, over the measured period / responses), Redis CPU per request (INFO cpu of the bench's redis-server),
// the CPU the rest of the machine used (noisy above 0.3 cores).
// Goals (http/report.mjs), compared within a round: CPU per request by its worst round, req/s ratios by their
// median over the rounds (req/s spreads up to 2x between rounds of one case here), with range and spread beside;
// none met unless the runs had 0 non-2xx, 0 errors and 0 degraded decisions.
// BENCH_QUIET_WAIT_S (default 0): before each run, wait up to that long for the rest of the machine to go quiet.
//
// Run: `npm run bench:http` (builds first). BENCH_HTTP_ADAPTERS (express,fastify), BENCH_HTTP_GUARDS (case ids:
// admit-all, admit-all-intercepted, await-redis, ours, ours-budget, throttler, throttler-ap; no guard always runs),
// BENCH_HTTP_CONNECTIONS (64), BENCH_ROUNDS below 5 only with BENCH_ALLOW_FEW_ROUNDS=1 (a smoke run),
// BENCH_HTTP_CPU_PROF=<dir> (a V8 CPU profile per app, written when the bench stops it).
// Writes test/bench/results/http.md, and the README's http section on a full run (5+ rounds, both adapters).
import { resolve } from 'node:path';
import { Redis } from 'ioredis';
import { envInteger, environmentHeader, measuredMs, packageVersion, runMain, startGuardedServer, writeResult } from './support/environment.mjs';
import { NOISY_CORES, startNoiseMeter, waitForQuiet } from './support/machine-noise.mjs';
import { writeReadmeSection } from './support/readme-section.mjs';
import { redisPid, startRedisAccounting } from './support/redis-stats.mjs';
import { benchRounds, goalsMarkdown, runRounds } from './support/rounds.mjs';
import { startAppProcess } from './http/app-process.mjs';
import { runLoad } from './http/load.mjs';
import { HUGE_LIMIT, localBudgetAvailable } from './http/server.mjs';
import { HTTP_GOALS_INTRO, casesTable, format, httpGoals, roundsTable } from './http/report.mjs';
import { readmeSummary } from './http/readme.mjs';

const MEASURE_S = measuredMs(3) / 1000;
const WARMUP_S = 1;
/** Load on each app once, before round 1, with each client variant: its JIT, connections and scripts warm, as in later rounds. */
const APP_WARMUP_S = 2;
const CONNECTIONS = envInteger('BENCH_HTTP_CONNECTIONS', 64);
const ROUNDS = benchRounds();
const QUIET_WAIT_S = Number(process.env.BENCH_QUIET_WAIT_S ?? 0);
const ADAPTERS = (process.env.BENCH_HTTP_ADAPTERS ?? 'express,fastify').split(',').map((s) => s.trim());
const IP_POOL = 10_000;
/** BENCH_HTTP_CPU_PROF=<dir>: each app runs under --cpu-prof (read them with http/cpu-profile-summary.mjs). */
const CPU_PROF_DIR = process.env.BENCH_HTTP_CPU_PROF ? resolve(process.env.BENCH_HTTP_CPU_PROF) : undefined;

const VARIANTS = [
  { id: 'one-ip', label: '1 IP', ipPool: 0 },
  { id: 'ip-pool', label: '10k IPs (XFF)', ipPool: IP_POOL },
];
const ALL_GUARDS = [
  { id: 'none', kind: 'none', label: 'no guard', config: { guard: 'none' } },
  { id: 'admit-all', kind: 'admit-all', label: 'a guard that only returns true', config: { guard: 'admit-all' } },
  {
    id: 'admit-all-intercepted',
    kind: 'admit-all',
    label: 'that guard and a global interceptor that only passes on',
    config: { guard: 'admit-all', interceptor: true },
  },
  { id: 'await-redis', kind: 'admit-all', label: 'a guard that only awaits one Redis PING (auto-pipelined)', config: { guard: 'await-redis', autoPipelining: true } },
  { id: 'ours', kind: 'ours', label: 'ours (sliding-window, Redis, module defaults)', config: { guard: 'ours', algorithm: 'sliding-window' } },
  {
    id: 'ours-budget',
    kind: 'ours',
    label: 'ours, default rule with `localBudget: true`',
    config: { guard: 'ours', algorithm: 'sliding-window', localBudget: true },
    // Leases are for hot keys: this case is scored with 1 client IP (one key) only.
    variants: ['one-ip'],
    // Spends leased units without asking Redis, so a run may leave no key: the check runs after the app's warm-up.
    leased: true,
    available: localBudgetAvailable,
  },
  { id: 'throttler', kind: 'throttler', label: 'throttler+redis, auto-pipelining off', config: { guard: 'throttler' } },
  { id: 'throttler-ap', kind: 'throttler', label: 'throttler+redis, auto-pipelining on', config: { guard: 'throttler', autoPipelining: true } },
];
/** BENCH_HTTP_GUARDS=id,id: only these cases (no guard always runs: every ratio is to it). */
const GUARDS = process.env.BENCH_HTTP_GUARDS
  ? ALL_GUARDS.filter((g) => g.id === 'none' || process.env.BENCH_HTTP_GUARDS.split(',').includes(g.id))
  : ALL_GUARDS;
/** Whether the build has the rule option `localBudget` (the leased case runs only then). */
const LOCAL_BUDGET = localBudgetAvailable(ALL_GUARDS.find((g) => g.id === 'ours-budget').config);
/** The cases this build can run: a guard whose option the build refuses is reported as not available instead. */
const RUNNABLE = GUARDS.filter((g) => !g.available || g.available(g.config));
const servesVariant = (guard, variant) => !guard.variants || guard.variants.includes(variant.id);
/** Guards whose decisions are in Redis: each run must leave a key there, or the storage was not used. */
const usesRedisKeys = (guard) => guard.kind === 'ours' || guard.kind === 'throttler';

/**
 * One request before the load: the guard must answer 200 with its own headers, or the case would measure
 * something else than it claims (a guard that is not installed, a storage that is not used).
 */
async function checkGuardAnswers(port, guard) {
  const response = await fetch(`http://127.0.0.1:${port}/ping`, { headers: { 'x-forwarded-for': '192.0.2.1' } });
  await response.text();
  const expected = { none: null, 'admit-all': null, ours: 'ratelimit-policy', throttler: 'x-ratelimit-limit' }[guard.kind];
  if (response.status !== 200) throw new Error(`${guard.label}: check request answered ${response.status}`);
  if (expected && !response.headers.has(expected)) throw new Error(`${guard.label}: check response has no ${expected} header`);
}

async function runCase(c, env) {
  const app = env.apps.get(`${c.adapter}-${c.guard.id}`);
  const waitedS = QUIET_WAIT_S > 0 ? await waitForQuiet(QUIET_WAIT_S) : 0;
  await runLoad({ port: app.port, seconds: WARMUP_S, connections: CONNECTIONS, ipPool: c.variant.ipPool });
  await app.resetStats();
  const accounting = await startRedisAccounting([env.admin]);
  const cpuBefore = await app.cpuUsage();
  const meter = startNoiseMeter(() => env.pids);
  const loadCpuBefore = process.cpuUsage();
  const result = await runLoad({ port: app.port, seconds: MEASURE_S, connections: CONNECTIONS, ipPool: c.variant.ipPool });
  const loadCpu = process.cpuUsage(loadCpuBefore);
  const noise = meter.stop();
  const cpuAfter = await app.cpuUsage();
  const appUserUs = cpuAfter.user - cpuBefore.user;
  const appSystemUs = cpuAfter.system - cpuBefore.system;
  const redis = await accounting.finish();
  const redisKeys = await env.admin.dbsize();
  const decisions = await app.stats();
  await env.admin.flushall();
  if (usesRedisKeys(c.guard) && !c.guard.leased && redisKeys === 0) throw new Error(`${c.guard.label}: the run left no key in Redis, so its storage was not used`);
  return {
    ...result,
    errors: result.errors + result.timeouts,
    degraded: decisions.degraded,
    waitedS,
    othersCores: noise.othersCores,
    appCpuUsPerRequest: (appUserUs + appSystemUs) / result.requests,
    appSystemUsPerRequest: appSystemUs / result.requests,
    redisCpuUsPerRequest: (redis.cpuSeconds * 1e6) / result.requests,
    redisKeys,
    // autocannon, in this process: on a 2-core machine the load generator competes with the app and Redis.
    loadCpuUsPerRequest: (loadCpu.user + loadCpu.system) / result.requests,
    machineBusyCores: noise.busyCores,
    scriptCallsPerRequest: redis.scriptCalls / result.requests,
  };
}

function logRun(r, index, total) {
  process.stderr.write(
    `[${index}/${total}] round ${r.round} ${r.id}: ${format.int(r.perSecond)} req/s, p99 ${format.ms(r.p99)} ms, non-2xx ${r.non2xx}, errors ${r.errors}, ` +
      `degraded ${r.degraded}, app CPU ${format.us(r.appCpuUsPerRequest)} µs/req (system ${format.us(r.appSystemUsPerRequest)}), Redis CPU ${format.us(r.redisCpuUsPerRequest)} µs/req, p50 ${format.ms(r.p50)} ms, others ${r.othersCores.toFixed(2)} cores${r.othersCores > NOISY_CORES ? ' NOISY' : ''}\n`,
  );
}

function render({ runs, cases, groups, redisVersion, seconds }) {
  const goals = httpGoals(runs, groups, { localBudget: LOCAL_BUDGET });
  const header = environmentHeader('HTTP benchmark', redisVersion, [
    `Rounds: ${ROUNDS}; wall time ${Math.round(seconds)} s`,
    `HTTP: NestJS ${packageVersion('@nestjs/core')}; @nestjs/platform-express ${packageVersion('@nestjs/platform-express')}, @nestjs/platform-fastify ${packageVersion('@nestjs/platform-fastify')}; load: autocannon ${packageVersion('autocannon')}`,
    'Apps: one child process per adapter and guard, started once, serving both client variants (the leased case: 1 IP only); GET /ping answering "ok"; trust proxy on',
    `Rules: limit ${HUGE_LIMIT.toExponential()} per 60 s, so every request is admitted; ours with its default headers, throttler with its default X-RateLimit-*`,
    `Local budget (rule option \`localBudget\`): ${LOCAL_BUDGET ? 'available; ours with `localBudget: true` run with 1 client IP' : 'not available in this build (defineRule refuses it): its case was not run and its goals are not scored'}`,
    `Load: ${CONNECTIONS} connections, pipelining 1; each app warmed up once at its start (${APP_WARMUP_S} s per client variant); per run ${WARMUP_S} s warm-up, then ${MEASURE_S} s measured (BENCH_SECONDS); FLUSHALL after every run`,
    `Order: every case once per round, rotated by one each round; "noisy" = the rest of the machine used more than ${NOISY_CORES} cores meanwhile (/proc/stat minus this process, the apps and redis-server)`,
    'app CPU µs/req: process.cpuUsage() (user + system) inside the app over the measured period / responses; Redis CPU µs/req: used_cpu_user + used_cpu_sys (INFO cpu) of the redis-server over the measured period / responses; Redis scripts/req: EVAL/EVALSHA/FCALL calls (INFO commandstats) / responses',
  ]);
  return {
    goals,
    markdown: [
      header,
      '',
      '## Cases',
      '',
      'Medians over the rounds; "vs no guard" is the ratio to the no-guard app of the same adapter and clients, taken per round.',
      '',
      casesTable(runs, cases),
      '',
      goalsMarkdown(goals, '## Goals', HTTP_GOALS_INTRO),
      '',
      '## Every run',
      '',
      'req/s of each run, with the cores the rest of the machine used meanwhile (`*`: noisy).',
      '',
      roundsTable(runs, cases, ROUNDS),
      '',
    ].join('\n'),
  };
}

async function main() {
  const started = performance.now();
  const { server, version } = await startGuardedServer();
  const admin = new Redis({ host: '127.0.0.1', port: server.port });
  const apps = new Map();
  try {
    for (const adapter of ADAPTERS) {
      for (const guard of RUNNABLE) {
        const profile = CPU_PROF_DIR ? { cpuProfile: { dir: CPU_PROF_DIR, name: `${adapter}-${guard.id}.cpuprofile` } } : {};
        await admin.flushall();
        const app = await startAppProcess({ ...guard.config, adapter, trustProxy: true, redisPort: server.port }, profile);
        apps.set(`${adapter}-${guard.id}`, app);
        await checkGuardAnswers(app.port, guard);
        // Round 1 ran cold otherwise: every guarded app's first run came out 5-10% below its later ones.
        for (const variant of VARIANTS.filter((v) => servesVariant(guard, v))) {
          await runLoad({ port: app.port, seconds: APP_WARMUP_S, connections: CONNECTIONS, ipPool: variant.ipPool });
        }
        if (usesRedisKeys(guard) && (await admin.dbsize()) === 0) throw new Error(`${guard.label}: its warm-up left no key in Redis, so its storage was not used`);
      }
    }
    await admin.flushall();
    const groups = ADAPTERS.flatMap((adapter) => VARIANTS.map((variant) => ({ id: `${adapter}-${variant.id}`, adapter, variant, label: `${adapter}, ${variant.label}` })));
    const cases = groups.flatMap((g) =>
      RUNNABLE.filter((guard) => servesVariant(guard, g.variant)).map((guard) => ({ id: `${g.id}-${guard.id}`, group: g.id, adapter: g.adapter, variant: g.variant, guard })),
    );
    const env = { apps, admin, pids: [process.pid, await redisPid(admin), ...[...apps.values()].map((a) => a.pid)] };
    process.stderr.write(`http bench: ${cases.length} cases x ${ROUNDS} rounds; localBudget ${LOCAL_BUDGET ? 'available' : 'not available in this build'}\n`);
    const runs = await runRounds({ rounds: ROUNDS, cases, runCase: (c) => runCase(c, env), log: logRun });
    const { markdown, goals } = render({ runs, cases, groups, redisVersion: version, seconds: (performance.now() - started) / 1000 });
    process.stdout.write(`\n${markdown}`);
    writeResult('http.md', markdown);
    const runsJson = { rounds: ROUNDS, localBudget: LOCAL_BUDGET, cases: cases.map(({ id, group, adapter, guard, variant }) => ({ id, group, adapter, guard: guard.label, variant: variant.label })), runs };
    writeResult('http-runs.json', `${JSON.stringify(runsJson, null, 1)}\n`);
    if (ROUNDS >= 5 && ADAPTERS.length === 2 && GUARDS === ALL_GUARDS) writeReadmeSection('http', readmeSummary({ runs, groups, goals, rounds: ROUNDS, measureS: MEASURE_S, localBudget: LOCAL_BUDGET }));
  } finally {
    await Promise.all([...apps.values()].map((a) => a.stop()));
    await admin.quit().catch(() => admin.disconnect());
    await server.stop();
  }
}

runMain('http bench', () => main().finally(() => setTimeout(() => process.exit(), 2000).unref()));
