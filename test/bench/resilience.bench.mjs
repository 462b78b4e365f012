// Resilience benchmark (issue 4): what a decision costs while Redis is down, and how many Redis calls the local
// block cache saves.
//
// 1. Decision latency under a Redis fault. RateLimitService.decide() (the guard's path) over the module's stack,
//    built by hand: ResilientStore(RedisStore(client, { timeoutMs }), MemoryStore, { timeoutMs: 50,
//    failurePolicy, circuitBreaker }) with an ioredis client made with safeClientOptions(50). A closed loop of
//    CONCURRENCY workers over 10,000 keys (sliding log, 100 per minute: nothing is refused) runs against a
//    redis-server of the bench's own; after a warm-up with Redis up, the fault is injected and the calls that end
//    in the next BENCH_SECONDS are recorded: p50/p99/p99.9/max latency, decisions/s, how many waited past
//    timeoutMs. Cases: Redis up (baseline); Redis stalled with SIGSTOP (socket open, no answer: every call waits
//    the timeout) with the circuit breaker effectively off (failureThreshold = MAX_SAFE_INTEGER) and on
//    (defaults: 3 failures, 500 ms doubling to 30 s); Redis killed with SIGKILL (connection refused: fast
//    failures) with the breaker off and on. For failurePolicy 'memory' and 'open'. After a stall, Redis is
//    resumed and the bench checks that the commands it ran late recorded nothing: the entries in the sliding
//    logs must equal the admissions Redis reported in time.
// 2. Single-key flood: FLOOD_REQUESTS (10,000) decide() calls on one key, limit 10 per minute, from
//    FLOOD_CONCURRENCY (50) workers, with the block cache on and off; script calls counted on the server
//    (CONFIG RESETSTAT, then INFO commandstats: EVALSHA + EVAL).
//
// Each worker yields to the event loop (setImmediate) between calls, as requests arriving on sockets would:
// otherwise a store that answers in microtasks (the memory fallback) would starve the timers that bound Redis calls.
//
// Run: `npm run build && node test/bench/resilience.bench.mjs`. Env: BENCH_SECONDS (measured seconds per fault
// case, default 5), FLOOD_REQUESTS (10000). Writes test/bench/results/resilience.md and prints it.
import { Redis } from 'ioredis';
import { MemoryStore, RateLimitPolicies, RateLimitService, RedisStore, ResilientStore, defineRule, safeClientOptions } from '../../dist/index.js';
// Not exported from the package; the service needs the settings the module would have validated.
import { validateModuleOptions } from '../../dist/config/module-options.validator.js';
import { envInteger, environmentHeader, measuredMs, runMain, writeResult } from './support/environment.mjs';
import { keySequence, LatencyRecorder } from './support/load.mjs';
import { startFaultableRedis } from './support/redis-control.mjs';
import { redisServerVersion } from './support/redis-process.mjs';
import { goalsSection, markdownTable } from './support/report.mjs';

const TIMEOUT_MS = 50;
const CONCURRENCY = 50;
const KEY_COUNT = 10_000;
const LIMIT = 100;
const WINDOW_MS = 60_000;
const WARMUP_MS = 1_000;
const MEASURE_MS = measuredMs(5);
const POLICIES = ['memory', 'open'];
const FLOOD_REQUESTS = envInteger('FLOOD_REQUESTS', 10_000);
const FLOOD_CONCURRENCY = 50;
const FLOOD_LIMIT = 10;
// Timer and event-loop slack allowed over timeoutMs before a wait counts as "past the timeout".
const SLACK = 1.2;
// A call this long paid (about) the whole timeout.
const PAID = 0.9;

const BREAKERS = {
  off: { failureThreshold: Number.MAX_SAFE_INTEGER },
  on: {},
};

const SCENARIOS = [
  { id: 'up', fault: 'none', breaker: 'on', label: 'Redis up (baseline)' },
  { id: 'stall-off', fault: 'stall', breaker: 'off', label: 'Redis stalled (SIGSTOP), breaker off' },
  { id: 'stall-on', fault: 'stall', breaker: 'on', label: 'Redis stalled (SIGSTOP), breaker on' },
  { id: 'kill-off', fault: 'kill', breaker: 'off', label: 'Redis killed (refused), breaker off' },
  { id: 'kill-on', fault: 'kill', breaker: 'on', label: 'Redis killed (refused), breaker on' },
];

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const yieldToLoop = () => new Promise((resolve) => setImmediate(resolve));
const nowNs = () => process.hrtime.bigint();

// ---- measuring ----

/** Latencies in ns; nearest-rank percentiles in ms, and how many waited (about) the whole timeout. */
class Latencies extends LatencyRecorder {
  summary() {
    const [p50, p99, p999, max] = this.percentilesMs(0.5, 0.99, 0.999, 1);
    let over = 0;
    let paid = 0;
    for (let i = 0; i < this.count; i++) {
      const v = this.values[i];
      if (v > TIMEOUT_MS * SLACK * 1e6) over++;
      if (v >= TIMEOUT_MS * PAID * 1e6) paid++;
    }
    return { p50, p99, p999, max, overTimeout: over, paidTimeout: paid };
  }
}

/**
 * The module's Redis stack, built by hand: client with safeClientOptions, RedisStore with a deadline,
 * ResilientStore with the memory fallback, and a RateLimitService whose decide() the guard would call.
 */
async function buildSubject(port, { failurePolicy, circuitBreaker, blockCache }) {
  const client = new Redis({ host: '127.0.0.1', port, ...safeClientOptions(TIMEOUT_MS) });
  const counters = { storeErrors: 0, circuitOpens: 0, errorKinds: new Map(), clientErrors: 0 };
  client.on('error', () => counters.clientErrors++);
  await connected(client);
  const store = new ResilientStore(new RedisStore(client, { timeoutMs: TIMEOUT_MS }), new MemoryStore(), {
    timeoutMs: TIMEOUT_MS,
    failurePolicy,
    circuitBreaker,
    onError: (error) => {
      counters.storeErrors++;
      const kind = errorKind(error);
      counters.errorKinds.set(kind, (counters.errorKinds.get(kind) ?? 0) + 1);
    },
    onCircuitChange: (state) => {
      if (state === 'open') counters.circuitOpens++;
    },
  });
  const service = new RateLimitService(store, new RateLimitPolicies({}), validateModuleOptions({ failurePolicy, timeoutMs: TIMEOUT_MS, blockCache }));
  return { client, store, service, counters };
}

/**
 * Connects a lazyConnect client: a first attempt that fails on a busy machine is retried by the client's own
 * retryStrategy, so wait for 'ready' (10 s at most); on failure the client is closed, not left reconnecting.
 */
async function connected(client) {
  const ready = new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('Redis client not ready within 10 s')), 10_000);
    client.once('ready', () => {
      clearTimeout(timer);
      resolve();
    });
  });
  client.connect().catch(() => undefined);
  try {
    await ready;
  } catch (error) {
    client.disconnect();
    throw error;
  }
}

function errorKind(error) {
  if (error?.name && error.name !== 'Error') return error.name;
  return String(error?.message ?? error).replace(/\s+/g, ' ').slice(0, 90);
}

/**
 * Closed loop on `decide(key)`. After `warmupMs`: `prepare()` (async, load still running), then
 * `onMeasureStart()`, then `fire()` sends the fault at the instant the measured period starts; every call that
 * ends within the next `measureMs` (having started before its end) is recorded, those in flight at the fault
 * included. `fire()` may return a promise (e.g. the process exiting), awaited after the load.
 */
async function loadWithFault({ decide, keys, prepare, fire, onMeasureStart }) {
  keys.reset();
  const latencies = new Latencies();
  let measureFrom = Infinity;
  let measureUntil = Infinity;
  let allowed = 0;
  let degraded = 0;
  let reportedByRedis = 0; // admissions Redis decided and answered in time, over the whole run
  let failure = null;

  const worker = async () => {
    while (failure === null) {
      await yieldToLoop();
      const before = nowNs();
      if (before >= measureUntil) return;
      let result;
      try {
        result = await decide(keys.next());
      } catch (error) {
        failure ??= error;
        return;
      }
      const after = nowNs();
      const fromPolicy = result.decisions.some((d) => d.degraded);
      if (result.allowed && !fromPolicy) reportedByRedis++;
      if (after >= measureFrom) {
        latencies.add(Number(after - before));
        if (result.allowed) allowed++;
        if (fromPolicy) degraded++;
      }
    }
  };

  const running = Promise.all(Array.from({ length: CONCURRENCY }, worker));
  await sleep(WARMUP_MS);
  let fired;
  if (failure === null) {
    await prepare();
    onMeasureStart();
    measureFrom = nowNs();
    measureUntil = measureFrom + BigInt(Math.round(MEASURE_MS * 1e6));
    fired = fire();
  }
  await running;
  await fired;
  if (failure !== null) throw failure;
  const n = latencies.count;
  return { decisions: n, perSecond: n / (MEASURE_MS / 1000), allowedShare: allowed / n, degradedShare: degraded / n, reportedByRedis, ...latencies.summary() };
}

/** Resolves once the client's connection has worked through its backlog (a PING answered after it). */
async function drain(client) {
  const until = Date.now() + 15_000;
  while (Date.now() < until) {
    try {
      await client.ping();
      return;
    } catch {
      await sleep(20);
    }
  }
  throw new Error('Redis did not answer within 15 s of SIGCONT');
}

/** Entries in every sliding log of the run (one per admitted unit): what Redis recorded. */
async function recordedAdmissions(admin) {
  let total = 0;
  let cursor = '0';
  do {
    const [next, keys] = await admin.scan(cursor, 'MATCH', 'rl:*', 'TYPE', 'zset', 'COUNT', 1000);
    cursor = next;
    if (keys.length > 0) {
      const pipeline = admin.pipeline();
      for (const key of keys) pipeline.zcard(key);
      for (const [error, count] of await pipeline.exec()) {
        if (error) throw error;
        total += count;
      }
    }
  } while (cursor !== '0');
  return total;
}

/** `calls` of each command in INFO commandstats. */
async function commandCalls(admin) {
  const info = await admin.info('commandstats');
  const calls = {};
  for (const match of info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) calls[match[1]] = Number(match[2]);
  return calls;
}

// ---- part 1: latency under a fault ----

async function runFaultCase(scenario, failurePolicy) {
  const server = await startFaultableRedis();
  let subject;
  let admin;
  try {
    subject = await buildSubject(server.port, { failurePolicy, circuitBreaker: BREAKERS[scenario.breaker], blockCache: true });
    admin = new Redis({ host: '127.0.0.1', port: server.port, lazyConnect: true, maxRetriesPerRequest: 0, enableOfflineQueue: false });
    admin.on('error', () => {});
    await connected(admin);
    const rule = defineRule({ algorithm: 'sliding-log', limit: LIMIT, window: WINDOW_MS }, 'api');
    const keys = keySequence({ keyCount: KEY_COUNT });
    const { service, counters } = subject;
    let errorsAtStart = 0;
    let opensAtStart = 0;
    const prepare = async () => {
      // RESETSTAT: so the scripts Redis runs late can be counted after SIGCONT.
      if (scenario.fault === 'stall') await admin.config('RESETSTAT');
      if (scenario.fault === 'kill') admin.disconnect();
    };
    // Sent synchronously: the measured period starts with the signal.
    const fire = () => (scenario.fault === 'stall' ? server.stall() : scenario.fault === 'kill' ? server.kill() : undefined);
    const result = await loadWithFault({
      decide: (key) => service.decide([{ key, rule }]),
      keys,
      prepare,
      fire,
      onMeasureStart: () => {
        errorsAtStart = counters.storeErrors;
        opensAtStart = counters.circuitOpens;
        counters.errorKinds.clear();
      },
    });
    const row = {
      ...scenario,
      failurePolicy,
      ...result,
      storeErrors: counters.storeErrors - errorsAtStart,
      warmupErrors: errorsAtStart,
      circuitOpens: counters.circuitOpens - opensAtStart,
      errorKinds: [...counters.errorKinds.entries()].sort((a, b) => b[1] - a[1]),
    };
    if (scenario.fault !== 'kill') {
      // Redis is back (or never left): what did it record, and how many scripts did it run late?
      server.resume();
      await drain(subject.client);
      await sleep(100);
      row.scriptsSinceStall = scenario.fault === 'stall' ? (await commandCalls(admin)).evalsha ?? 0 : undefined;
      row.recorded = await recordedAdmissions(admin);
    }
    return row;
  } finally {
    server.resume();
    subject?.client.disconnect();
    admin?.disconnect();
    await server.kill();
  }
}

// ---- part 2: single-key flood ----

async function runFlood(blockCache) {
  const server = await startFaultableRedis();
  let subject;
  const admin = new Redis({ host: '127.0.0.1', port: server.port });
  admin.on('error', () => {});
  try {
    subject = await buildSubject(server.port, { failurePolicy: 'memory', circuitBreaker: {}, blockCache });
    const { service } = subject;
    const rule = defineRule({ limit: FLOOD_LIMIT, window: '1m' }, 'flood');
    // Scripts loaded and Redis's clock measured (deadlines on) before counting.
    for (let i = 0; i < 3; i++) await service.decide([{ key: `warm-up-${i}`, rule }]);
    await sleep(50);
    await admin.config('RESETSTAT');
    const latencies = new Latencies();
    let issued = 0;
    let allowed = 0;
    let degraded = 0;
    const worker = async () => {
      while (issued < FLOOD_REQUESTS) {
        issued++;
        await yieldToLoop();
        const before = nowNs();
        const result = await service.decide([{ key: 'flood', rule }]);
        latencies.add(Number(nowNs() - before));
        if (result.allowed) allowed++;
        if (result.decisions.some((d) => d.degraded)) degraded++;
      }
    };
    const started = nowNs();
    await Promise.all(Array.from({ length: FLOOD_CONCURRENCY }, worker));
    const seconds = Number(nowNs() - started) / 1e9;
    const calls = await commandCalls(admin);
    const scripts = (calls.evalsha ?? 0) + (calls.eval ?? 0);
    return {
      blockCache,
      requests: latencies.count,
      perSecond: latencies.count / seconds,
      allowed,
      degraded,
      scripts,
      evalsha: calls.evalsha ?? 0,
      eval: calls.eval ?? 0,
      cacheHits: service.blockCache?.hits ?? 0,
      ...latencies.summary(),
    };
  } finally {
    subject?.client.disconnect();
    admin.disconnect();
    await server.kill();
  }
}

// ---- report ----

const int = (n) => (Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : '-');
const ms = (n) => (Number.isFinite(n) ? n.toFixed(2) : '-');
const pct = (n) => (Number.isFinite(n) ? `${(n * 100).toFixed(1)}%` : '-');

function latencyTable(rows) {
  return markdownTable(
    ['case', 'decisions/s', 'p50 ms', 'p99 ms', 'p99.9 ms', 'max ms', `>= ${TIMEOUT_MS * PAID} ms`, `> ${TIMEOUT_MS * SLACK} ms`, 'degraded', 'allowed', 'store errors', 'circuit opened'],
    rows.map((r) => [
      r.label,
      int(r.perSecond),
      ms(r.p50),
      ms(r.p99),
      ms(r.p999),
      ms(r.max),
      `${int(r.paidTimeout)} (${pct(r.paidTimeout / r.decisions)})`,
      `${int(r.overTimeout)} (${pct(r.overTimeout / r.decisions)})`,
      pct(r.degradedShare),
      pct(r.allowedShare),
      int(r.storeErrors),
      int(r.circuitOpens),
    ]),
    [false, true, true, true, true, true, true, true, true, true, true, true],
  );
}

function errorKindsTable(rows) {
  return markdownTable(
    ['policy', 'case', 'errors in warm-up (Redis up)', 'store errors by kind (measured period)'],
    rows.map((r) => [r.failurePolicy, r.label, int(r.warmupErrors), r.errorKinds.map(([kind, n]) => `${kind}: ${int(n)}`).join('; ') || '-']),
    [false, false, true, false],
  );
}

function lateTable(rows) {
  return markdownTable(
    ['policy', 'case', 'EVALSHA run from just before SIGSTOP', 'admissions Redis answered in time', 'entries recorded in Redis', 'difference'],
    rows
      .filter((r) => r.recorded !== undefined)
      .map((r) => [r.failurePolicy, r.label, r.scriptsSinceStall === undefined ? '-' : int(r.scriptsSinceStall), int(r.reportedByRedis), int(r.recorded), int(r.recorded - r.reportedByRedis)]),
    [false, false, true, true, true, true],
  );
}

function floodTable(rows) {
  const off = rows.find((r) => !r.blockCache);
  return markdownTable(
    ['block cache', 'requests', 'decisions/s', 'p50 ms', 'p99 ms', 'allowed', 'EVALSHA', 'EVAL', 'script calls vs cache off', 'cache hits'],
    rows.map((r) => [r.blockCache ? 'on' : 'off', int(r.requests), int(r.perSecond), ms(r.p50), ms(r.p99), int(r.allowed), int(r.evalsha), int(r.eval), pct(r.scripts / off.scripts), int(r.cacheHits)]),
    [false, true, true, true, true, true, true, true, true, true],
  );
}

function goals(faultRows, floodRows) {
  const bound = TIMEOUT_MS * SLACK;
  const faults = faultRows.filter((r) => r.fault !== 'none');
  const worstP99 = faults.reduce((a, b) => (b.p99 > a.p99 ? b : a));
  const worstMax = faults.reduce((a, b) => (b.max > a.max ? b : a));
  const out = [
    {
      met: worstP99.p99 <= bound,
      text: `p99 of a decision with Redis stalled or killed <= ${bound} ms (timeoutMs ${TIMEOUT_MS} + 20% for timers): worst ${ms(worstP99.p99)} ms (${worstP99.label}, '${worstP99.failurePolicy}'); worst max ${ms(worstMax.max)} ms (${worstMax.label}, '${worstMax.failurePolicy}')`,
    },
  ];
  for (const policy of POLICIES) {
    const off = faultRows.find((r) => r.id === 'stall-off' && r.failurePolicy === policy);
    const on = faultRows.find((r) => r.id === 'stall-on' && r.failurePolicy === policy);
    if (!off || !on) continue;
    out.push({
      met: on.paidTimeout / on.decisions <= 0.01,
      text: `breaker on, Redis stalled, '${policy}': at most 1% of decisions wait the timeout (>= ${TIMEOUT_MS * PAID} ms): ${pct(on.paidTimeout / on.decisions)}, ${int(on.paidTimeout)} decisions (breaker off: ${pct(off.paidTimeout / off.decisions)}, ${int(off.paidTimeout)}); p99 ${ms(on.p99)} ms vs ${ms(off.p99)} ms off; ${int(on.perSecond)} vs ${int(off.perSecond)} decisions/s; ${int(on.storeErrors)} vs ${int(off.storeErrors)} failed store calls`,
    });
  }
  const late = faultRows.filter((r) => r.fault === 'stall' && r.recorded !== undefined);
  if (late.length > 0) {
    const worst = late.reduce((a, b) => (Math.abs(b.recorded - b.reportedByRedis) > Math.abs(a.recorded - a.reportedByRedis) ? b : a));
    out.push({
      met: late.every((r) => r.recorded - r.reportedByRedis <= CONCURRENCY),
      text: `scripts a stalled Redis ran late record nothing (entries recorded - admissions answered in time <= ${CONCURRENCY}, the calls that can be in flight at the stall): worst difference ${int(worst.recorded - worst.reportedByRedis)} ('${worst.failurePolicy}', ${worst.label}; ${int(worst.scriptsSinceStall)} EVALSHA run from just before SIGSTOP)`,
    });
  }
  const on = floodRows.find((r) => r.blockCache);
  const off = floodRows.find((r) => !r.blockCache);
  const ceiling = FLOOD_LIMIT + FLOOD_CONCURRENCY;
  out.push({
    met: on.scripts <= ceiling && on.allowed === FLOOD_LIMIT && off.allowed === FLOOD_LIMIT,
    text: `block cache: a ${int(FLOOD_REQUESTS)}-request flood on one key costs <= limit + concurrency = ${ceiling} script calls: ${int(on.scripts)} (cache off: ${int(off.scripts)}; ${pct(1 - on.scripts / off.scripts)} saved), ${int(on.perSecond)} vs ${int(off.perSecond)} decisions/s; admitted ${on.allowed} and ${off.allowed} (limit ${FLOOD_LIMIT})`,
  });
  return out;
}

function render(redisVersion, faultRows, floodRows) {
  const header = environmentHeader('Resilience benchmark', redisVersion, [
    `Stack under test: RateLimitService.decide() over ResilientStore(RedisStore(client, { timeoutMs: ${TIMEOUT_MS} }), MemoryStore, { timeoutMs: ${TIMEOUT_MS}, failurePolicy, circuitBreaker }); ioredis client with safeClientOptions(${TIMEOUT_MS}) (no offline queue, no retries, commandTimeout ${safeClientOptions(TIMEOUT_MS).commandTimeout} ms, connectTimeout ${safeClientOptions(TIMEOUT_MS).connectTimeout} ms); fresh redis-server, client and store per case`,
    `Fault cases: closed loop of ${CONCURRENCY} workers over ${int(KEY_COUNT)} keys (same seeded sequence each case), sliding log ${LIMIT} per ${WINDOW_MS / 1000} s, block cache on; ${WARMUP_MS / 1000} s with Redis up, then the fault, then ${MEASURE_MS / 1000} s measured (BENCH_SECONDS): every call that ends in the measured period, including those in flight at the fault`,
    `Breaker off = failureThreshold ${Number.MAX_SAFE_INTEGER}; on = defaults (3 consecutive failures, open 500 ms, doubling per failed probe up to 30 s). Stalled = SIGSTOP (connection open, no answer); killed = SIGKILL (connection refused, ioredis reconnecting in the background)`,
    `Flood: ${int(FLOOD_REQUESTS)} decide() calls on one key from ${FLOOD_CONCURRENCY} workers, sliding window ${FLOOD_LIMIT} per 60 s, failurePolicy 'memory', breaker defaults; script calls counted by the server (CONFIG RESETSTAT before, INFO commandstats after)`,
    'Each worker yields to the event loop (setImmediate) between calls, as requests arriving on sockets would; latency is the decide() call alone (process.hrtime.bigint)',
  ]);
  const sections = [header, '', '## Decision latency while Redis is down', ''];
  sections.push(
    `">= ${TIMEOUT_MS * PAID} ms": decisions that paid (about) the whole timeout. "> ${TIMEOUT_MS * SLACK} ms": decisions that waited past timeoutMs + 20% (the timeout's own timer slack). "degraded": decided by the failure policy, not Redis. ` +
      '"store errors": failed Redis calls in the measured period (each one a decision that paid for the failure: the timeout when stalled, a refused connection when killed); ' +
      '"circuit opened": times the breaker opened in the measured period.',
    '',
  );
  for (const policy of POLICIES) {
    sections.push(`### failurePolicy '${policy}'`, '', latencyTable(faultRows.filter((r) => r.failurePolicy === policy)), '');
  }
  sections.push(
    '### Store errors by kind',
    '',
    '"errors in warm-up": failed Redis calls before the fault, Redis up (the first calls load the scripts, EVALSHA then EVAL, and measure Redis\'s clock: on a busy machine they can miss the 50 ms).',
    '',
    errorKindsTable(faultRows),
    '',
  );
  sections.push(
    '## Commands a stalled Redis runs late',
    '',
    'After the measured period the stalled server is resumed (SIGCONT) and works through the commands queued on its socket. Each script carries a deadline ' +
      `(now + ${TIMEOUT_MS} ms in Redis's clock), so one run after it writes nothing. "admissions Redis answered in time": allowed decisions that came from Redis ` +
      'before the client gave up, over the whole run (warm-up included); "entries recorded": sliding-log entries in Redis afterwards (one per admission). The ' +
      'difference is admissions Redis counted that no caller was told of. Had the late scripts counted, it would be about as large as the EVALSHA column (every key ' +
      'is far below its limit). What remains are scripts Redis ran in time whose replies the client did not read within the timeout (not yet sent when Redis ' +
      `stopped, or read after the timer fired): at most one per call in flight (${CONCURRENCY}); those callers got the failure policy's answer, so with 'memory' such a request is counted twice (in Redis and in the fallback). The EVALSHA ` +
      'column counts from CONFIG RESETSTAT, sent just before SIGSTOP while the load runs, to the end: the late scripts plus those run between RESETSTAT and the stop.',
    '',
    lateTable(faultRows),
    '',
  );
  sections.push('## Local block cache under a single-key flood', '', floodTable(floodRows), '');
  sections.push(goalsSection(goals(faultRows, floodRows)), '');
  return sections.join('\n');
}

// ---- main ----

async function main() {
  const redisVersion = redisServerVersion();
  const faultRows = [];
  for (const failurePolicy of POLICIES) {
    for (const scenario of SCENARIOS) {
      const row = await runFaultCase(scenario, failurePolicy);
      faultRows.push(row);
      process.stderr.write(
        `[${failurePolicy}] ${row.label}: ${int(row.perSecond)}/s, p50 ${ms(row.p50)} ms, p99 ${ms(row.p99)} ms, max ${ms(row.max)} ms, store errors ${row.storeErrors}, circuit opened ${row.circuitOpens}\n`,
      );
    }
  }
  const floodRows = [];
  for (const blockCache of [false, true]) {
    const row = await runFlood(blockCache);
    floodRows.push(row);
    process.stderr.write(`[flood] block cache ${blockCache ? 'on' : 'off'}: ${int(row.perSecond)}/s, ${row.scripts} script calls, ${row.allowed} allowed\n`);
  }
  const report = render(redisVersion, faultRows, floodRows);
  process.stdout.write(report);
  writeResult('resilience.md', report);
}

// Exit once main has settled, even if a failure left a client reconnecting or a child's pipes open.
runMain('resilience bench', () => main().finally(() => setTimeout(() => process.exit(), 2_000).unref()));
