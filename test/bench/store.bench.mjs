// Store benchmark: decisions/s, latency and Redis CPU per decision of our module against rate-limiter-flexible
// (RLF) and the raw ceiling of one call per decision (EVALSHA of `return 1`), on one redis-server, on a 3-master
// Cluster, in memory, and on a client of each library the module takes (ioredis, node-redis 5 and 6, iovalkey,
// GLIDE).
//
// Method (what a skeptic asks for):
// - Ours runs through the full module path: a RateLimitService from a Nest application context of
//   RateLimitModule.forRoot({ store: 'redis://...', metrics: { registry } }) (the module's own client, RedisStore,
//   ResilientStore with its timeout and breaker, metrics on) and `decide()`, the guard's path. With the module's
//   `coalesce` option on and off when the build has it (detected: the options validator accepts it).
// - The peers run on their own ioredis client, each with auto-pipelining on and off; goals use the peer's better
//   setting (higher median decisions/s over the rounds).
// - Every case runs once per round, BENCH_ROUNDS rounds (default 5), in an order rotated each round; ratios are
//   taken within a round, and a goal is met only if its worst round clears it and the cases compared had 0
//   errors and 0 degraded (failure-policy) decisions (support/rounds.mjs).
// - Per run: the CPU the rest of the machine used (support/machine-noise.mjs; > 0.3 cores = noisy), Redis CPU
//   (INFO cpu) and script time (INFO commandstats) per decision, over the measured period only.
// - Memory: the same path for both libraries, fixed window (RLF's memory limiter is a fixed-window counter):
//   all admitted (limit 10M), and nearly all refused (limit 1, after a warm-up that exhausts every key), at
//   10,000 and 1,000,000 keys (1M: 10x the memory store's default maxKeys), through the module (metrics on) and
//   the bare MemoryStore; all admitted, a minimal Map-based fixed window as the harness's reference (not scored).
//   Each memory run is a child process of its own (store/memory-child.mjs).
// - Client libraries (store/client-libraries.mjs): ours, coalescing on, fixed and sliding window, with a client of
//   each library passed as `store`, beside RLF's limiter for that library on a client of its own, at 200 in
//   flight over 10,000 keys; each of ours is also compared with ours on ioredis in the same round. Each of these
//   cases runs once, unrecorded, before round 1, so that no library's first case pays for V8 compiling its code.
//
// Run: `npm run bench:store` (builds first). Env: BENCH_SECONDS (measured seconds per run, default 2; each run
// also has 0.5 s of warm-up), BENCH_ROUNDS (default 5), BENCH_STORE_GROUPS (comma list of redis, memory, cluster,
// clients; default all; `none` measures nothing and rewrites the reports from store-runs.json). Writes
// test/bench/results/store.md and store-runs.json; a run of some groups keeps the others' runs from the last
// store-runs.json (store/previous-runs.mjs), each labelled with its commit and date. Rewrites the README's store
// section when every group is there, each from a run of at least 5 rounds.
import { Redis } from 'ioredis';
import { environmentHeader, measuredMs, packageVersion, runMain, startGuardedServer, writeResult } from './support/environment.mjs';
import { redisServerVersion } from './support/redis-process.mjs';
import { keySequence, runClosedLoop } from './support/load.mjs';
import { NOISY_CORES, startNoiseMeter } from './support/machine-noise.mjs';
import { writeReadmeSection } from './support/readme-section.mjs';
import { redisPid, startRedisAccounting } from './support/redis-stats.mjs';
import { startBenchCluster } from './support/redis-cluster.mjs';
import { benchRounds, goalsMarkdown, runRounds } from './support/rounds.mjs';
import { casesTable, roundsTable, storeGoals } from './store/report.mjs';
import { readmeSummary } from './store/readme.mjs';
import { ADMIT_ALL, ALGORITHMS, admitLimit, memoryCases, memoryId } from './store/memory-cases.mjs';
import { runMemoryCaseInChild } from './store/memory-child.mjs';
import { coalesceAvailable, moduleSubject, noopSubject, rlfRedisSubject } from './store/subjects.mjs';
import { CLIENT_LIBRARIES, clientCases } from './store/client-libraries.mjs';
import { clientGoals, clientsTable, clientsTableNote } from './store/clients-report.mjs';
import { carriedOver, describeOrigin } from './store/previous-runs.mjs';

const COUNTERS = ['fixed-window', 'sliding-window', 'token-bucket', 'gcra'];
const IN_FLIGHT = 200;
const REDIS_KEYS = 10_000;
const WARMUP_MS = 500;
/** The measured period of the unrecorded run of each client-library case before round 1. */
const WARMUP_ROUND_MS = 1_000;
const MEASURE_MS = measuredMs(2);
const ROUNDS = benchRounds();
const ALL_GROUPS = ['redis', 'memory', 'cluster', 'clients'];
/** The groups this run measures; `none` measures nothing and rewrites the reports from store-runs.json. */
const GROUPS = process.env.BENCH_STORE_GROUPS === 'none' ? [] : (process.env.BENCH_STORE_GROUPS ?? ALL_GROUPS.join(',')).split(',').map((s) => s.trim());
const unknownGroups = GROUPS.filter((g) => !ALL_GROUPS.includes(g));
if (unknownGroups.length) throw new Error(`BENCH_STORE_GROUPS: unknown ${unknownGroups.join(', ')} (known: ${ALL_GROUPS.join(', ')})`);
const onOff = (on) => (on ? 'on' : 'off');

// ---- cases ----

function redisCases(coalesce) {
  const cases = [];
  for (const ap of [true, false]) {
    cases.push({ id: `noop-ap-${onOff(ap)}`, group: 'redis', label: `raw EVALSHA return 1, auto-pipelining ${onOff(ap)}`, make: ({ port }) => noopSubject({ port, autopipeline: ap }) });
    cases.push({
      id: `rlf-ap-${onOff(ap)}`,
      group: 'redis',
      label: `RateLimiterRedis, auto-pipelining ${onOff(ap)}`,
      make: ({ port, round }) => rlfRedisSubject({ port, autopipeline: ap, limit: ADMIT_ALL, prefix: `rlf${round}` }),
    });
  }
  const settings = coalesce ? [true, false] : [undefined];
  for (const algorithm of ALGORITHMS) {
    for (const co of settings) {
      cases.push({
        id: oursId(algorithm, co),
        group: 'redis',
        label: `ours ${algorithm} (module)${co === undefined ? '' : `, coalescing ${onOff(co)}`}`,
        make: ({ port }) => moduleSubject({ store: `redis://127.0.0.1:${port}`, algorithm, limit: admitLimit(algorithm), coalesce: co }),
      });
    }
  }
  if (coalesce) {
    for (const co of [true, false]) {
      cases.push({
        id: `c1-sliding-window-co-${onOff(co)}`,
        group: 'redis',
        inFlight: 1,
        label: `ours sliding-window (module), 1 in flight, coalescing ${onOff(co)}`,
        make: ({ port }) => moduleSubject({ store: `redis://127.0.0.1:${port}`, algorithm: 'sliding-window', limit: ADMIT_ALL, coalesce: co }),
      });
    }
  }
  return cases;
}

/** Our case id; with no coalesce option both settings name the one case run with the module's default. */
function oursId(algorithm, co) {
  return co === undefined ? `ours-${algorithm}` : `ours-${algorithm}-co-${onOff(co)}`;
}

function clusterCases(coalesce) {
  return (coalesce ? [true, false] : [undefined]).map((co) => ({
    id: co === undefined ? 'cluster-sliding-window' : `cluster-sliding-window-co-${onOff(co)}`,
    group: 'cluster',
    label: `ours sliding-window (module), 3-master Cluster${co === undefined ? '' : `, coalescing ${onOff(co)}`}`,
    make: ({ cluster }) => moduleSubject({ store: { cluster: cluster.nodes }, algorithm: 'sliding-window', limit: ADMIT_ALL, coalesce: co }),
  }));
}

// ---- one run ----

const sequences = new Map();
function keysFor(keyCount) {
  if (!sequences.has(keyCount)) sequences.set(keyCount, keySequence({ keyCount }));
  return sequences.get(keyCount);
}

async function runCase(benchCase, round, env, measureMs = MEASURE_MS) {
  if (benchCase.group === 'memory') return runMemoryCase(benchCase, env);
  const subject = await benchCase.make({ ...env, round });
  const keyCount = benchCase.keyCount ?? REDIS_KEYS;
  const admins = benchCase.group === 'cluster' ? env.cluster.admins : [env.admin];
  let accounting;
  let meter;
  let cpuBefore;
  let result;
  let appCpu;
  try {
    result = await runClosedLoop({
      call: subject.call,
      keys: keysFor(keyCount),
      concurrency: benchCase.inFlight ?? IN_FLIGHT,
      warmupMs: WARMUP_MS,
      measureMs,
      countErrors: true,
      onMeasureStart: async () => {
        accounting = await startRedisAccounting(admins);
        meter = startNoiseMeter(() => env.pids);
        cpuBefore = process.cpuUsage();
      },
    });
    appCpu = process.cpuUsage(cpuBefore);
  } finally {
    await subject.close();
  }
  const noise = meter.stop();
  const redis = await accounting.finish();
  if (benchCase.group === 'cluster') await env.cluster.flush();
  else await env.admin.flushall();
  globalThis.gc?.(); // the next case should not pay for this one's garbage (1M keys' worth at most)
  return {
    ...result,
    othersCores: noise.othersCores,
    ownCores: noise.ownCores,
    // This process's CPU (every thread: GLIDE's core runs in threads of its own), the load loop's share included.
    appCpuUsPerDecision: (appCpu.user + appCpu.system) / result.decisions,
    redisCpuUsPerDecision: (redis.cpuSeconds * 1e6) / result.decisions,
    scriptUsPerDecision: redis.scriptUsec / result.decisions,
    scriptCallsPerDecision: redis.scriptCalls / result.decisions,
  };
}

/**
 * A memory case runs in a child process of its own, which exits after it: RateLimiterMemory arms a 60 s timer per
 * key, so a run at 1M keys fired a million timers into whatever ran a minute later in this process (every Redis
 * case of rounds 2-5 ran 10-40% slower with the memory cases in the same process than without them).
 */
async function runMemoryCase(benchCase, env) {
  let meter;
  let noise;
  const result = await runMemoryCaseInChild(benchCase.id, {
    inFlight: benchCase.inFlight ?? IN_FLIGHT,
    warmupMs: WARMUP_MS,
    measureMs: MEASURE_MS,
    onMeasureStart: (pid) => {
      meter = startNoiseMeter(() => [...env.pids, pid]);
    },
    onMeasureEnd: () => {
      noise = meter.stop();
    },
  });
  return { ...result, othersCores: noise.othersCores, ownCores: noise.ownCores, redisCpuUsPerDecision: NaN, scriptUsPerDecision: NaN, scriptCallsPerDecision: NaN };
}

function logRun(run, index, total) {
  const noisy = run.othersCores > NOISY_CORES ? ' NOISY' : '';
  process.stderr.write(
    `[${index}/${total}] round ${run.round} ${run.id}: ${Math.round(run.perSecond).toLocaleString('en-US')}/s, p50 ${(run.p50 * 1000).toFixed(0)} µs, ` +
      `p99 ${(run.p99 * 1000).toFixed(0)} µs, app ${Number.isFinite(run.appCpuUsPerDecision) ? run.appCpuUsPerDecision.toFixed(1) : '-'} µs/dec, redis ${Number.isFinite(run.redisCpuUsPerDecision) ? run.redisCpuUsPerDecision.toFixed(1) : '-'} µs/dec, ` +
      `errors ${run.errors}, degraded ${run.degraded}, others ${run.othersCores.toFixed(2)} cores${noisy}\n`,
  );
}

// ---- report ----

function render({ runs, cases, coalesce, redisVersion, origins, seconds }) {
  const originLines = ALL_GROUPS.filter((g) => origins[g]).map((g) => `${g}: ${describeOrigin(origins[g])}${GROUPS.includes(g) ? ' (this run)' : ' (carried over from the last report)'}`);
  const header = environmentHeader('Store benchmark', redisVersion, [
    `Groups and the run each comes from: ${originLines.join('; ')}; ${GROUPS.length ? `wall time of this run ${Math.round(seconds)} s` : 'this report re-rendered from store-runs.json (BENCH_STORE_GROUPS=none)'}`,
    `Coalescing (module option \`coalesce\`): ${coalesce ? 'available, run on and off' : 'not available in this build (ours ran with the module defaults)'}`,
    `Load: closed loop of ${IN_FLIGHT} calls in flight (1 for the "1 in flight" cases) over ${REDIS_KEYS.toLocaleString('en-US')} keys on Redis, ` +
      `10,000 or 1,000,000 in memory, the same seeded key sequence for every case; per run ${WARMUP_MS / 1000} s warm-up, then ${MEASURE_MS / 1000} s measured (BENCH_SECONDS)`,
    `Ours: RateLimitService.decide() from NestFactory.createApplicationContext(RateLimitModule.forRoot({ store, metrics: { registry } })), built fresh each run; ` +
      'Redis rules limit 10M (sliding log 1,000) per 60 s, so every call is admitted (FLUSHALL after each run)',
    `Peers: rate-limiter-flexible ${packageVersion('rate-limiter-flexible')} RateLimiterRedis / RateLimiterMemory, raw EVALSHA \`return 1\` (ioredis defineCommand), each on a fresh client, auto-pipelining on and off; in memory, as a reference and not scored, a minimal Map-based fixed window (no eviction, Date.now(), no validation): what this harness allows a memory store`,
    `Client libraries (clients group): ${CLIENT_LIBRARIES.map((l) => `${l.name} ${l.version}`).join(', ')}; each client opened fresh for every run, with no offline queue (GLIDE: requestTimeout 5 s); RLF on a client of its own, opened the same way; each case run once, unrecorded, before round 1 (V8 compiles each library's code)`,
    `Order: every case once per round, the order rotated by one each round; "noisy" = the rest of the machine used more than ${NOISY_CORES} cores during the measured period (/proc/stat minus the bench's node and redis-server processes)`,
    'App CPU/decision (Redis cases): user + system CPU of the bench process (all its threads, the load loop included) over the measured period / decisions. ' +
      'Redis CPU/decision: used_cpu_user + used_cpu_sys of the redis-server(s) over the measured period / decisions; script µs/decision and calls/decision from INFO commandstats (EVAL/EVALSHA/FCALL), reset after the warm-up',
  ]);
  const groups = [
    ['Redis (one redis-server)', 'redis'],
    ['Memory', 'memory'],
    ['Redis Cluster (3 masters)', 'cluster'],
    ['Client libraries (one redis-server)', 'clients'],
  ];
  const sections = [];
  for (const [title, group] of groups) {
    const mine = cases.filter((c) => c.group === group);
    if (!mine.length) continue;
    sections.push(`## ${title}`, '');
    if (group === 'clients') sections.push(clientsTable(runs), '', clientsTableNote(), '');
    sections.push(casesTable(runs, mine), '');
  }
  const has = (group) => cases.some((c) => c.group === group);
  const goals = [...(has('redis') && has('memory') ? storeGoals(runs, goalInputs(coalesce)) : []), ...(has('clients') ? clientGoals(runs) : [])];
  const rounds = Math.max(...runs.map((r) => r.round));
  return {
    goals,
    markdown: [
      header,
      '',
      'Medians over the rounds; "min-max" and "spread" ((max - min) / median) are of decisions/s across the rounds.',
      '',
      ...sections,
      goals.length ? goalsMarkdown(goals) : '## Goals\n\nNot scored: no goal has its cases in these groups.',
      '',
      '## Every run',
      '',
      'decisions/s of each run, with the cores the rest of the machine used meanwhile (`*`: noisy).',
      '',
      roundsTable(runs, cases, rounds),
      '',
    ].join('\n'),
  };
}

function goalInputs(coalesce) {
  return {
    algorithms: ALGORITHMS,
    counters: COUNTERS,
    coalesce,
    ours: (algorithm, on) => oursId(algorithm, coalesce ? on : undefined),
    memoryIds: memoryId,
    latencyIds: coalesce ? { on: 'c1-sliding-window-co-on', off: 'c1-sliding-window-co-off' } : undefined,
  };
}

async function main() {
  const started = performance.now();
  const coalesce = await coalesceAvailable();
  const measured = GROUPS.length > 0 ? await measure(coalesce) : { cases: [], runs: [], redisVersion: redisServerVersion() };
  const commit = GROUPS.length > 0 ? (process.env.BENCH_COMMIT ?? (await gitCommit())) : undefined;
  const earlier = carriedOver(GROUPS);
  const byGroup = (a, b) => ALL_GROUPS.indexOf(a.group) - ALL_GROUPS.indexOf(b.group);
  const cases = [...earlier.cases, ...measured.cases.map(({ id, group, label }) => ({ id, group, label }))].sort(byGroup);
  const runs = [...earlier.runs, ...measured.runs];
  const date = new Date().toISOString();
  const origins = { ...earlier.origins, ...Object.fromEntries(GROUPS.map((g) => [g, { commit, date, rounds: ROUNDS, measureS: MEASURE_MS / 1000 }])) };
  const { markdown, goals } = render({ runs, cases, coalesce, redisVersion: measured.redisVersion, origins, seconds: (performance.now() - started) / 1000 });
  process.stdout.write(markdown);
  writeResult('store.md', markdown);
  // Every run's figures, so a reader can recompute any ratio or score another threshold.
  writeResult('store-runs.json', `${JSON.stringify({ origins, cases, runs }, null, 1)}\n`);
  const complete = ALL_GROUPS.every((g) => origins[g]?.rounds >= 5);
  if (complete) writeReadmeSection('store', readmeSummary({ runs, goals, coalesce, origins }));
}

/** Runs the cases of GROUPS, every round, on servers of this run: { cases, runs, redisVersion }. */
async function measure(coalesce) {
  const { server, version: redisVersion } = await startGuardedServer();
  const admin = new Redis({ host: '127.0.0.1', port: server.port });
  const cluster = GROUPS.includes('cluster') ? await startBenchCluster() : undefined;
  try {
    const env = { port: server.port, admin, cluster, pids: [process.pid, await redisPid(admin), ...(cluster?.pids ?? [])] };
    const cases = [
      ...(GROUPS.includes('redis') ? redisCases(coalesce) : []),
      ...(GROUPS.includes('memory') ? memoryCases() : []),
      ...(cluster ? clusterCases(coalesce) : []),
      ...(GROUPS.includes('clients') ? clientCases() : []),
    ];
    process.stderr.write(`store bench: ${cases.length} cases x ${ROUNDS} rounds, coalescing ${coalesce ? 'available' : 'not available'}\n`);
    // Each client library's code is compiled by V8 as it runs: the first case of a library paid for it in round 1 (up to
    // 4x the app CPU per decision of its later rounds). One unrecorded run of each case first.
    const unwarmed = cases.filter((c) => c.group === 'clients');
    if (unwarmed.length) process.stderr.write(`warm-up: the ${unwarmed.length} client-library cases once each, ${WARMUP_ROUND_MS / 1000} s, not recorded\n`);
    for (const benchCase of unwarmed) await runCase(benchCase, 0, env, WARMUP_ROUND_MS);
    const runs = await runRounds({ rounds: ROUNDS, cases, runCase: (c, round) => runCase(c, round, env), log: logRun });
    return { cases, runs, redisVersion };
  } finally {
    await admin.quit().catch(() => admin.disconnect());
    await cluster?.stop();
    await server.stop();
  }
}

async function gitCommit() {
  const { execFileSync } = await import('node:child_process');
  try {
    const status = execFileSync('git', ['status', '--porcelain', '--', 'lib', 'lua'], { encoding: 'utf8' }).trim();
    const head = execFileSync('git', ['log', '-1', '--format=%h'], { encoding: 'utf8' }).trim();
    return status ? `${head} (with uncommitted changes in lib/ or lua/)` : head;
  } catch {
    return 'unknown';
  }
}

// A subject left open by a failure (a client reconnecting to a stopped server) must not keep the bench alive.
runMain('store bench', () => main().finally(() => setTimeout(() => process.exit(), 2000).unref()));
