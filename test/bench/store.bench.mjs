// Store benchmark: decisions/s and latency of RedisStore (each algorithm, autopipelining on and off) and
// MemoryStore under a closed loop of concurrent calls, against two references under the same load: a raw
// EVALSHA of `return 1` (the client's ceiling) and rate-limiter-flexible. Run with `npm run bench:store`
// (builds first); BENCH_SECONDS sets the measured period of each case (default 5).
import { mkdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { MemoryStore, RedisStore, defineRule } from '../../dist/index.js';
import { keySequence, runClosedLoop } from './support/load.mjs';
import { startGuardedServer } from './support/environment.mjs';
import { environmentSection, format, goalsSection, resultsTable } from './support/report.mjs';

const ALGORITHMS = ['sliding-log', 'sliding-window', 'fixed-window', 'token-bucket', 'gcra'];
const COUNTER_BASED = ['fixed-window', 'sliding-window', 'token-bucket', 'gcra'];
const CONCURRENCY = 200;
const KEY_COUNT = 10_000;
const LIMIT = 100;
const WINDOW_MS = 60_000;
const WARMUP_MS = 1_000;
const MEASURE_MS = measuredSeconds() * 1000;
const RESULTS_FILE = new URL('./results/store.md', import.meta.url);
const RUN_ID = Date.now().toString(36);

function measuredSeconds() {
  const raw = process.env.BENCH_SECONDS ?? '5';
  const seconds = Number(raw);
  if (!Number.isFinite(seconds) || seconds <= 0) throw new Error(`BENCH_SECONDS must be a positive number, got ${JSON.stringify(raw)}`);
  return seconds;
}

const ruleFor = (algorithm) => defineRule({ algorithm, limit: LIMIT, window: WINDOW_MS }, 'bench');
const pipelining = (on) => `autopipeline ${on ? 'on' : 'off'}`;

/** rate-limiter-flexible rejects with a RateLimiterRes when the limit is exceeded: a decision, not an error. */
function deniedOrRethrow(error) {
  if (error instanceof RateLimiterRes) return false;
  throw error;
}

// ---- cases: each one builds its subject on a fresh client and returns `call(key) => Promise<allowed>` ----

function redisCases() {
  const cases = [];
  for (const autopipeline of [true, false]) {
    const base = { group: 'redis', autopipeline };
    cases.push({
      ...base,
      kind: 'noop',
      name: `raw EVALSHA return 1 (${pipelining(autopipeline)})`,
      setup: (client) => {
        client.defineCommand('noop', { numberOfKeys: 1, lua: 'return 1' });
        return async (key) => (await client.noop(key)) === 1;
      },
    });
    cases.push({
      ...base,
      kind: 'rlflx',
      name: `rate-limiter-flexible Redis (${pipelining(autopipeline)})`,
      setup: (client) => {
        const limiter = new RateLimiterRedis({ storeClient: client, points: LIMIT, duration: WINDOW_MS / 1000, keyPrefix: `rlflx${RUN_ID}` });
        return (key) => limiter.consume(key).then(() => true, deniedOrRethrow);
      },
    });
    for (const algorithm of ALGORITHMS) {
      cases.push({
        ...base,
        kind: 'store',
        algorithm,
        name: `redis ${algorithm} (${pipelining(autopipeline)})`,
        setup: (client) => {
          const store = new RedisStore(client, { keyPrefix: `bench${RUN_ID}` });
          const rule = ruleFor(algorithm);
          return async (key) => (await store.consume(key, rule)).allowed;
        },
      });
    }
  }
  return cases;
}

function memoryCases() {
  const cases = [
    {
      group: 'memory',
      kind: 'rlflx',
      name: 'rate-limiter-flexible Memory',
      setup: () => {
        const limiter = new RateLimiterMemory({ points: LIMIT, duration: WINDOW_MS / 1000 });
        return (key) => limiter.consume(key).then(() => true, deniedOrRethrow);
      },
    },
  ];
  for (const algorithm of ALGORITHMS) {
    cases.push({
      group: 'memory',
      kind: 'store',
      algorithm,
      name: `memory ${algorithm}`,
      setup: () => {
        const store = new MemoryStore();
        const rule = ruleFor(algorithm);
        return async (key) => (await store.consume(key, rule)).allowed;
      },
    });
  }
  return cases;
}

// ---- running ----

async function runRedisCase(benchCase, { port, admin, keys }) {
  const client = new Redis({ host: '127.0.0.1', port, enableAutoPipelining: benchCase.autopipeline });
  try {
    await client.ping(); // connected before the clock starts
    const call = benchCase.setup(client);
    return await runClosedLoop({ call, keys, concurrency: CONCURRENCY, warmupMs: WARMUP_MS, measureMs: MEASURE_MS });
  } finally {
    await client.quit().catch(() => client.disconnect());
    await admin.flushall();
  }
}

function runMemoryCase(benchCase, { keys }) {
  return runClosedLoop({ call: benchCase.setup(), keys, concurrency: CONCURRENCY, warmupMs: WARMUP_MS, measureMs: MEASURE_MS });
}

function logProgress(index, total, row) {
  process.stderr.write(
    `[${index}/${total}] ${row.name}: ${format.perSecond(row.perSecond)}/s, p50 ${row.p50.toFixed(3)} ms, p99 ${row.p99.toFixed(3)} ms\n`,
  );
}

async function runAllCases(server) {
  const keys = keySequence({ keyCount: KEY_COUNT });
  const admin = new Redis({ host: '127.0.0.1', port: server.port });
  const cases = [...redisCases(), ...memoryCases()];
  const rows = [];
  try {
    for (const [i, benchCase] of cases.entries()) {
      const result =
        benchCase.group === 'redis'
          ? await runRedisCase(benchCase, { port: server.port, admin, keys })
          : await runMemoryCase(benchCase, { keys });
      const row = { ...benchCase, ...result };
      rows.push(row);
      logProgress(i + 1, cases.length, row);
    }
  } finally {
    await admin.quit().catch(() => admin.disconnect());
  }
  return rows;
}

// ---- goals ----

/** The reference row (`rlflx` or `noop`) of the same group and autopipelining setting as `row`. */
function referenceFinder(rows) {
  return (row, kind) => rows.find((r) => r.group === row.group && r.kind === kind && r.autopipeline === row.autopipeline);
}

/** Redis goal for one algorithm, judged at our store's better autopipelining setting; the other is reported too. */
function redisGoal(rows, reference, algorithm, kind, threshold, label) {
  const [best, other] = rows
    .filter((r) => r.group === 'redis' && r.kind === 'store' && r.algorithm === algorithm)
    .sort((a, b) => b.perSecond - a.perSecond);
  const ratioOf = (row) => row.perSecond / reference(row, kind).perSecond;
  const bestRef = reference(best, kind);
  return {
    met: ratioOf(best) >= threshold,
    text:
      `redis ${algorithm} >= ${threshold}x ${label}: ${format.ratio(ratioOf(best))} with ${pipelining(best.autopipeline)} ` +
      `(our better setting; ${format.perSecond(best.perSecond)}/s vs ${format.perSecond(bestRef.perSecond)}/s); ` +
      `with ${pipelining(other.autopipeline)}: ${format.ratio(ratioOf(other))} ` +
      `(${format.perSecond(other.perSecond)}/s vs ${format.perSecond(reference(other, kind).perSecond)}/s)` +
      allowedShareCaution(best, bestRef),
  };
}

function memoryGoal(rows, reference, algorithm, threshold) {
  const row = rows.find((r) => r.group === 'memory' && r.kind === 'store' && r.algorithm === algorithm);
  const ref = reference(row, 'rlflx');
  const value = row.perSecond / ref.perSecond;
  return {
    met: value >= threshold,
    text:
      `memory ${algorithm} >= ${threshold}x RateLimiterMemory: ${format.ratio(value)} ` +
      `(${format.perSecond(row.perSecond)}/s vs ${format.perSecond(ref.perSecond)}/s)${allowedShareCaution(row, ref)}`,
  };
}

/**
 * The fixed load exhausts every key once a case has admitted 100 calls per key (1M in all), so a faster subject
 * spends more of its run refusing; refusals take other code paths, and the ratio is then not like for like.
 */
function allowedShareCaution(row, ref) {
  if (Math.abs(row.allowedShare - ref.allowedShare) < 0.1) return '';
  return `; caution: allowed share ${format.percent(row.allowedShare)} vs ${format.percent(ref.allowedShare)}, so the two mostly ran different paths (admit vs refuse)`;
}

function evaluateGoals(rows, reference) {
  const rlflxLabel = 'rate-limiter-flexible Redis';
  return [
    ...COUNTER_BASED.flatMap((a) => [
      redisGoal(rows, reference, a, 'rlflx', 1.3, rlflxLabel),
      redisGoal(rows, reference, a, 'noop', 0.85, 'raw EVALSHA'),
    ]),
    redisGoal(rows, reference, 'sliding-log', 'rlflx', 0.9, rlflxLabel),
    ...ALGORITHMS.map((a) => memoryGoal(rows, reference, a, 2)),
  ];
}

// ---- report ----

function packageVersion(name) {
  try {
    return createRequire(import.meta.url)(`${name}/package.json`).version;
  } catch {
    return 'unknown';
  }
}

function environment(redisVersion) {
  const cpus = os.cpus();
  return {
    date: new Date().toISOString(),
    node: process.version,
    redis: redisVersion,
    cpuModel: cpus[0]?.model.trim() ?? 'unknown',
    cores: cpus.length,
    ioredis: packageVersion('ioredis'),
    rlflx: packageVersion('rate-limiter-flexible'),
    concurrency: CONCURRENCY,
    keyCount: KEY_COUNT,
    limit: LIMIT,
    windowMs: WINDOW_MS,
    warmupMs: WARMUP_MS,
    measureMs: MEASURE_MS,
  };
}

function renderReport(env, rows) {
  const reference = referenceFinder(rows);
  const notes =
    'Ratios compare decisions/s at the same autopipelining setting: "vs rlflx" is rate-limiter-flexible Redis for ' +
    'Redis rows and RateLimiterMemory for memory rows; "vs raw EVALSHA" is a script that only returns 1 (the ' +
    "client's ceiling). \"allowed\" is the share of decisions that admitted the request.";
  return [
    environmentSection(env),
    '',
    '## Results',
    '',
    resultsTable(rows, reference),
    '',
    notes,
    '',
    goalsSection(evaluateGoals(rows, reference)),
    '',
  ].join('\n');
}

// ---- main ----

async function main() {
  const { server, version: redisVersion } = await startGuardedServer();
  let rows;
  try {
    rows = await runAllCases(server);
  } finally {
    await server.stop();
  }
  const report = renderReport(environment(redisVersion), rows);
  process.stdout.write(report);
  mkdirSync(new URL('.', RESULTS_FILE), { recursive: true });
  writeFileSync(RESULTS_FILE, report);
  process.stderr.write(`\nWritten to ${RESULTS_FILE.pathname}\n`);
}

main().catch((error) => {
  process.stderr.write(`store bench failed: ${error?.stack ?? error}\n`);
  process.exitCode = 1;
});
