// Accuracy bench: replays arrival traces (steady, bursty at window boundaries, Poisson) through every algorithm of
// ours and through two peers, and measures what each admitted: total, the peak in any true sliding window of the
// rule's length (the boundary burst) and its excess over the limit, and the distance from the exact sliding log.
//
// How each subject is timed:
// - Ours: RedisStore against a real redis-server with an injected clock (`clock: () => now`) that the replay
//   moves to each arrival's time, so the replay is exact, deterministic and takes milliseconds. The same traces
//   go through MemoryStore on the same clock, to show both stores take the same decisions.
// - Peers (rate-limiter-flexible RateLimiterRedis; @nestjs/throttler's Redis storage, @nest-lab/throttler-storage-
//   redis, driven through `increment(key, ttl, limit, blockDuration, name)` as ThrottlerGuard calls it, with the
//   guard's default blockDuration = ttl, allowed = !isBlocked): they read real time (Redis key expiry), so the
//   traces are replayed in real time, each request sent (not awaited) at its arrival time; what is measured is
//   the time each request was sent, from performance.now(). Controls: our sliding log and fixed window replayed
//   the same way in real time (Redis TIME), which shows how much the real-time timing itself blurs the figures.
//
// Run: `npm run build && node test/bench/accuracy.bench.mjs` (or `npm run bench` for every bench).
// Env: ACCURACY_LIMIT (default 10), ACCURACY_WINDOWS (trace length in windows, default 12). The window is 1 s,
// so the real-time part lasts about ACCURACY_WINDOWS seconds (all traces and peers run side by side).
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { ThrottlerStorageRedisService } from '@nest-lab/throttler-storage-redis';
import { MemoryStore, RedisStore, defineRule } from '../../dist/index.js';
import { envInteger, environmentHeader, runMain, startGuardedServer, writeResult } from './support/environment.mjs';
import { markdownTable, goalsSection } from './support/report.mjs';
import { lineChart } from './support/svg-chart.mjs';
import { burstyTrace, maxInSpan, poissonTrace, rollingCounts, steadyTrace } from './support/traces.mjs';

const ALGORITHMS = ['sliding-log', 'sliding-window', 'fixed-window', 'token-bucket', 'gcra'];
const LIMIT = envInteger('ACCURACY_LIMIT', 10);
const WINDOW_MS = 1000;
const SEGMENTS = 10;
const WINDOWS = envInteger('ACCURACY_WINDOWS', 12);
// A whole multiple of the window, so the injected clock's windows start where the traces' windows start.
const T0 = 1_700_000_000_000;

const TRACES = {
  steady: { about: `constant ${LIMIT * 1.5}/s (1.5 x the limit)`, times: steadyTrace({ limit: LIMIT, windowMs: WINDOW_MS, windows: WINDOWS }) },
  bursty: {
    about: `every 3 s: 1 request at a window start, then ${LIMIT} in the last 50 ms of that window and ${LIMIT} in the first 50 ms of the next`,
    times: burstyTrace({ limit: LIMIT, windowMs: WINDOW_MS, windows: WINDOWS }),
  },
  poisson: { about: `Poisson arrivals, mean ${LIMIT * 2}/s (2 x the limit), seeded`, times: poissonTrace({ limit: LIMIT, windowMs: WINDOW_MS, windows: WINDOWS }) },
};

const ruleFor = (algorithm) => defineRule({ algorithm, limit: LIMIT, window: WINDOW_MS, ...(algorithm === 'sliding-window' ? { segments: SEGMENTS } : {}) }, 'acc');

// ---- ours, on an injected clock ----

/** Replays `times` through `store` with the clock set to each arrival; returns the decisions (true = admitted). */
async function replayOnClock(store, setNow, rule, key, times) {
  const decisions = [];
  for (const t of times) {
    setNow(T0 + t);
    decisions.push((await store.consume(key, rule)).allowed);
  }
  return decisions;
}

async function replayOurs(client) {
  let now = T0;
  const clock = () => now;
  const setNow = (ms) => {
    now = ms;
  };
  const redisStore = new RedisStore(client, { keyPrefix: 'acc', clock });
  const memoryStore = new MemoryStore({ keyPrefix: 'acc', clock });
  const runs = [];
  for (const [trace, { times }] of Object.entries(TRACES)) {
    for (const algorithm of ALGORITHMS) {
      const rule = ruleFor(algorithm);
      const key = `${trace}-${algorithm}`;
      const onRedis = await replayOnClock(redisStore, setNow, rule, key, times);
      const onMemory = await replayOnClock(memoryStore, setNow, rule, key, times);
      const agreeing = onRedis.filter((d, i) => d === onMemory[i]).length;
      runs.push({ trace, name: algorithm, algorithm, timing: 'injected clock', times, admittedAt: times.filter((_, i) => onRedis[i]), agreeing });
    }
  }
  return runs;
}

// ---- peers and real-time controls ----

/** rate-limiter-flexible rejects with a RateLimiterRes when the limit is exceeded: a refusal, not an error. */
function deniedOrRethrow(error) {
  if (error instanceof RateLimiterRes) return false;
  throw error;
}

function realTimeSubjects(client) {
  const rlflx = new RateLimiterRedis({ storeClient: client, points: LIMIT, duration: WINDOW_MS / 1000, keyPrefix: 'acc-rlflx' });
  const throttler = new ThrottlerStorageRedisService(client);
  const ours = new RedisStore(client, { keyPrefix: 'acc-rt' }); // no clock: Redis TIME, like production
  return [
    { name: 'rate-limiter-flexible', peer: true, decide: (key) => rlflx.consume(key).then(() => true, deniedOrRethrow) },
    {
      name: '@nestjs/throttler (redis storage)',
      peer: true,
      decide: async (key) => !(await throttler.increment(key, WINDOW_MS, LIMIT, WINDOW_MS, 'default')).isBlocked,
    },
    { name: 'sliding-log (real-time control)', algorithm: 'sliding-log', decide: async (key) => (await ours.consume(key, ruleFor('sliding-log'))).allowed },
    { name: 'fixed-window (real-time control)', algorithm: 'fixed-window', decide: async (key) => (await ours.consume(key, ruleFor('fixed-window'))).allowed },
  ];
}

/**
 * Sends every trace's requests to every subject at their arrival times, all side by side on one schedule
 * (each subject and trace on its own key). Starts on a whole second of the wall clock, so that Redis TIME's
 * epoch-aligned fixed windows begin where the traces' windows begin. Each request is sent without waiting
 * for the previous reply, as independent clients would; its time is when it was sent.
 */
async function replayInRealTime(subjects) {
  const events = [];
  for (const [trace, { times }] of Object.entries(TRACES)) {
    for (const subject of subjects) {
      const run = { trace, name: subject.name, algorithm: subject.algorithm, peer: subject.peer, timing: 'real time', times, sent: [] };
      for (const t of times) events.push({ t, run, subject, key: `${trace}-${subject.name.replace(/\W+/g, '-')}` });
    }
  }
  events.sort((a, b) => a.t - b.t);
  // One call per subject first, on a key of its own: connection, script loading and JIT are not in the replay.
  await Promise.all(subjects.map((s) => s.decide(`warmup-${s.name.replace(/\W+/g, '-')}`)));
  await sleep(1000 - (Date.now() % 1000) + 1000);
  const start = performance.now();
  const pending = [];
  for (const event of events) {
    const wait = event.t - (performance.now() - start);
    if (wait > 0.5) await sleep(wait);
    const sentAt = performance.now() - start;
    pending.push(event.subject.decide(event.key).then((allowed) => event.run.sent.push({ sentAt, allowed })));
  }
  await Promise.all(pending);
  const runs = [...new Set(events.map((e) => e.run))];
  for (const run of runs) {
    run.sent.sort((a, b) => a.sentAt - b.sentAt);
    run.admittedAt = run.sent.filter((s) => s.allowed).map((s) => s.sentAt);
    run.lateMs = Math.max(...run.sent.map((s, i) => s.sentAt - run.times[i]));
  }
  return runs;
}

// ---- measures, report, charts ----

function measure(run, slidingLogAdmitted) {
  const admitted = run.admittedAt.length;
  const peak = maxInSpan(run.admittedAt, WINDOW_MS);
  return {
    ...run,
    attempts: run.times.length,
    admitted,
    peak,
    excess: Math.max(0, peak - LIMIT),
    peakShort: maxInSpan(run.admittedAt, WINDOW_MS - WINDOW_MS / SEGMENTS),
    vsLog: admitted - slidingLogAdmitted,
  };
}

const signed = (n) => (n > 0 ? `+${n}` : String(n));

function accuracyTable(rows) {
  const headers = ['trace', 'limiter', 'timing', 'attempts', 'admitted', 'vs sliding log', 'peak in any 1 s', 'excess', 'peak in any 0.9 s', 'memory store agrees'];
  const cells = rows.map((r) => [
    r.trace,
    r.name,
    r.timing === 'real time' ? `real time (late <= ${r.lateMs.toFixed(1)} ms)` : r.timing,
    String(r.attempts),
    String(r.admitted),
    `${signed(r.vsLog)} (${signed(Math.round((r.vsLog / (r.admitted - r.vsLog)) * 100))}%)`,
    String(r.peak),
    String(r.excess),
    String(r.peakShort),
    r.agreeing === undefined ? '-' : `${r.agreeing}/${r.attempts}`,
  ]);
  return markdownTable(headers, cells, [false, false, false, true, true, true, true, true, true, true]);
}

function goals(rows) {
  const clockRows = rows.filter((r) => r.timing === 'injected clock');
  const log = clockRows.filter((r) => r.algorithm === 'sliding-log');
  const sw = clockRows.filter((r) => r.algorithm === 'sliding-window');
  const disagreeing = clockRows.filter((r) => r.agreeing !== r.attempts);
  const list = (rs, f) => rs.map((r) => `${r.trace} ${f(r)}`).join(', ');
  return [
    {
      met: log.every((r) => r.excess === 0),
      text: `sliding log: zero excess over the limit in every trace (peak in any 1 s: ${list(log, (r) => r.peak)}; limit ${LIMIT})`,
    },
    {
      met: sw.every((r) => r.peakShort <= LIMIT && r.peak <= 2 * LIMIT),
      text:
        `sliding window within its documented bound (README: at most limit in any interval of window - window/segments, ` +
        `at most 2 x limit in a window): peak in any 0.9 s ${list(sw, (r) => r.peakShort)} (<= ${LIMIT}); ` +
        `peak in any 1 s ${list(sw, (r) => r.peak)} (<= ${2 * LIMIT})`,
    },
    {
      met: disagreeing.length === 0,
      text: `MemoryStore takes the same decisions as RedisStore on every trace and algorithm${disagreeing.length ? `; differs on ${list(disagreeing, (r) => r.name)}` : ''}`,
    },
  ];
}

function chart(trace, rows) {
  const shown = rows.filter((r) => r.trace === trace && (r.timing === 'injected clock' || r.peer));
  const endMs = WINDOWS * WINDOW_MS;
  return lineChart({
    title: `Admitted in the trailing 1 s window, ${trace} trace (limit ${LIMIT} per 1 s)`,
    xLabel: 'time (s); ours on an injected clock, peers in real time',
    yLabel: 'admitted in (t - 1 s, t]',
    step: true,
    xFormat: (v) => String(v / 1000),
    series: shown.map((r) => ({ name: r.name, points: rollingCounts(r.admittedAt, WINDOW_MS, endMs) })),
    refLines: [
      { y: LIMIT, label: `limit ${LIMIT}` },
      { y: 2 * LIMIT, label: `2 x limit`, color: '#999' },
    ],
  });
}

function report(redisVersion, rows) {
  const traceLines = Object.entries(TRACES).map(([name, { about, times }]) => `\`${name}\`: ${about}; ${times.length} requests over ${WINDOWS} s`);
  const header = environmentHeader('Accuracy benchmark', redisVersion, [
    `Rule: limit ${LIMIT} per ${WINDOW_MS} ms window for every limiter (sliding window: ${SEGMENTS} segments; token bucket: refill ${LIMIT} per window; GCRA: burst ${LIMIT})`,
    ...traceLines.map((l) => `Trace ${l}`),
    'Ours: RedisStore on the bench\'s redis-server with an injected clock set to each arrival time (exact, deterministic), and MemoryStore on the same clock',
    'Peers: replayed in real time (request sent at its arrival time, not awaited; times measured at sending with performance.now()); ' +
      'rate-limiter-flexible RateLimiterRedis (points = limit, duration 1 s); @nest-lab/throttler-storage-redis `increment(key, 1000, limit, 1000, "default")`, ' +
      'as ThrottlerGuard calls it (blockDuration defaults to ttl), admitted when !isBlocked',
    'Real-time controls: our sliding log and fixed window replayed in real time like the peers (Redis TIME); their figures against the injected-clock rows show the blur the real-time timing adds',
  ]);
  const columns =
    '"peak in any 1 s" is the most admitted requests inside any interval [t, t + 1 s): the true sliding window; "excess" is how far it ' +
    'goes over the limit. "vs sliding log" compares the admitted total with the exact sliding log\'s on the same trace (injected clock). ' +
    '"peak in any 0.9 s" is the interval the sliding window guarantees (window - window/segments). "late" is the most a real-time request ' +
    'was sent after its arrival time.';
  const goalList = goals(rows);
  return [
    header,
    '',
    '## Results',
    '',
    accuracyTable(rows),
    '',
    columns,
    '',
    '## Charts',
    '',
    ...Object.keys(TRACES).map((t) => `![${t}](accuracy-${t}.svg)`),
    '',
    goalsSection(goalList),
    '',
  ].join('\n');
}

async function main() {
  const { server, version } = await startGuardedServer();
  const client = new Redis({ host: '127.0.0.1', port: server.port });
  let ours;
  let realTime;
  try {
    process.stderr.write('accuracy: replaying traces on an injected clock (ours)\n');
    ours = await replayOurs(client);
    await client.flushdb();
    process.stderr.write(`accuracy: replaying traces in real time (peers and controls, ~${WINDOWS + 2} s)\n`);
    realTime = await replayInRealTime(realTimeSubjects(client));
  } finally {
    await client.quit().catch(() => client.disconnect());
    await server.stop();
  }
  const rows = [];
  for (const trace of Object.keys(TRACES)) {
    const logAdmitted = ours.find((r) => r.trace === trace && r.algorithm === 'sliding-log').admittedAt.length;
    for (const run of [...ours, ...realTime].filter((r) => r.trace === trace)) rows.push(measure(run, logAdmitted));
  }
  const text = report(version, rows);
  process.stdout.write(text);
  writeResult('accuracy.md', text);
  for (const trace of Object.keys(TRACES)) writeResult(`accuracy-${trace}.svg`, chart(trace, rows));
}

runMain('accuracy bench', main);
