// Waiting calls across processes: RateLimitService.waitToConsume, as an app calls a payment provider that allows
// 100/s (and 5,000/min). PROCESSES app processes (test/redis/fixtures/waiter.mjs: a Nest application context on the
// BUILT package each) run WAITERS loops each, calling waitToConsume on one key for BENCH_SECONDS (default 10), on a
// fresh redis-server. Every admission is witnessed apart from the decisions (Redis TIME before and after its call,
// appended to a list) and counted per window of each rule here (support/admission-windows.mjs).
//
// Reports per case: the achieved rate per second (median and worst of the full windows), the most any window
// admitted (never above the limit), the store calls per admission, and the ordering across processes (the most later
// arrivals served before one call; the longest wait over the mean). Writes test/bench/results/acquire.md.
// Run: `npm run bench:acquire` (builds first). Env: BENCH_SECONDS, ACQUIRE_PROCESSES (4), ACQUIRE_WAITERS (50).
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { countPerWindow, fairness, parseBrackets } from './support/admission-windows.mjs';
import { envInteger, environmentHeader, measuredMs, runMain, startGuardedServer, writeResult } from './support/environment.mjs';
import { NOISY_CORES, startNoiseMeter } from './support/machine-noise.mjs';
import { redisPid } from './support/redis-stats.mjs';
import { goalsSection, markdownTable } from './support/report.mjs';
import { median } from './support/rounds.mjs';

const WAITER = fileURLToPath(new URL('../redis/fixtures/waiter.mjs', import.meta.url));
const PROCESSES = envInteger('ACQUIRE_PROCESSES', 4);
const WAITERS = envInteger('ACQUIRE_WAITERS', 50);
const MEASURED_MS = measuredMs(10);
const SECOND = { algorithm: 'fixed-window', limit: 100, window: 1_000 };
const MINUTE = { algorithm: 'fixed-window', limit: 5_000, window: 60_000 };
const CASES = [
  { id: 'second', label: '100/s', rules: { second: SECOND } },
  { id: 'pair', label: '100/s + 5,000/min', rules: { second: SECOND, minute: MINUTE } },
];
/** The goal: every full second within 2% of the limit, and no window of any rule above its limit. */
const WITHIN = 0.02;

/** The child's next line of output. */
function nextLine(child) {
  return new Promise((resolve, reject) => {
    let buffer = '';
    const onData = (chunk) => {
      buffer += chunk.toString();
      const i = buffer.indexOf('\n');
      if (i < 0) return;
      child.stdout.off('data', onData);
      child.off('close', onClose);
      resolve(buffer.slice(0, i));
    };
    const onClose = (code, signal) => reject(new Error(`waiter process ended (code ${code}, signal ${signal}) without a line`));
    child.stdout.on('data', onData);
    child.once('close', onClose);
  });
}

const us = ([seconds, micros]) => Number(seconds) * 1_000_000 + Number(micros);

async function runCase(url, admin, serverPid, { id, label, rules }) {
  const prefix = `bench-acquire-${id}-${process.pid}`;
  const children = Array.from({ length: PROCESSES }, () =>
    spawn(process.execPath, [WAITER, url, prefix, JSON.stringify(rules), String(WAITERS)], { stdio: ['pipe', 'pipe', 'inherit'], env: { ...process.env, NODE_OPTIONS: '' } }),
  );
  try {
    await Promise.all(children.map(nextLine));
    const results = children.map(nextLine);
    const meter = startNoiseMeter(() => [process.pid, serverPid, ...children.map((c) => c.pid)]);
    const startUs = us(await admin.time());
    const untilMs = Date.now() + MEASURED_MS;
    for (const child of children) child.stdin.write(JSON.stringify({ untilMs }) + '\n');
    const reports = (await Promise.all(results)).map((line) => JSON.parse(line));
    const noise = meter.stop();
    const endUs = startUs + MEASURED_MS * 1000;
    const brackets = parseBrackets(await admin.lrange(`${prefix}:admissions`, 0, -1));
    const perRule = Object.entries(rules).map(([name, rule]) => {
      const { counts, max, straddling } = countPerWindow(brackets, rule.window, rule.limit);
      const w = rule.window * 1000;
      // Windows wholly inside the measured period: the first and last are cut by its start and end.
      const full = [...counts.entries()].filter(([k]) => k * w >= startUs && (k + 1) * w <= endUs).map(([, n]) => n);
      for (let k = Math.ceil(startUs / w); (k + 1) * w <= endUs; k++) if (!counts.has(k)) full.push(0);
      return { name, rule, max, straddling, full };
    });
    const second = perRule[0];
    const calls = reports.flatMap((r) => r.calls);
    const sum = (f) => reports.reduce((a, r) => a + f(r), 0);
    return {
      label,
      admitted: brackets.length,
      perRule,
      medianRate: median(second.full),
      worstRate: Math.min(...second.full),
      fullWindows: second.full.length,
      asked: sum((r) => r.asked),
      degraded: sum((r) => r.degraded),
      refunds: sum((r) => r.refunds),
      fairness: fairness(calls),
      served: calls.length,
      noise,
    };
  } finally {
    for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  }
}

function report(version, rows) {
  const seconds = MEASURED_MS / 1000;
  const header = environmentHeader('Waiting calls across processes (waitToConsume)', version, [
    `Load: ${PROCESSES} processes x ${WAITERS} waiters, each waiter calling \`waitToConsume('provider', rules)\` in a loop for ${seconds} s (BENCH_SECONDS); the calls still waiting at the end are aborted (AbortSignal)`,
    'Each process: a Nest application context on the built package (test/redis/fixtures/waiter.mjs), an ioredis client, failurePolicy closed, timeoutMs 10 s: only Redis admits',
    'Counted independently of the decisions: each admission appends the Redis TIME read before its call and after it to a list; admissions are counted per window of each rule from those (a call straddling a window end is placed so as to keep within the limit if any placement does; "straddling" says how many)',
    'Rate per second: admissions in each full 1 s window of the measured period (fixed windows aligned on the epoch, as the script\'s); the first and last windows, cut by the period, are left out',
    `Ordering across processes: "overtakes" is the most calls that arrived after one call (any process) and were served before it; max/mean is the longest wait over the mean wait. Within a process, calls are served in arrival order (FIFO), and tested so`,
    'The machine is shared and noisy (2 cores, other test runs beside the bench): the noise column is the CPU the rest of the machine used meanwhile. Figures are from one brief run',
  ]);
  const table = markdownTable(
    ['case', 'admitted', 'full windows', 'median /s', 'worst /s', 'most in a window (per rule)', 'straddling', 'store calls / admission', 'degraded', 'overtakes', 'max wait / mean', 'noise (other cores)'],
    rows.map((r) => [
      r.label,
      String(r.admitted),
      String(r.fullWindows),
      String(r.medianRate),
      String(r.worstRate),
      r.perRule.map((p) => `${p.name} ${p.max} of ${p.rule.limit}`).join(', '),
      r.perRule.map((p) => String(p.straddling)).join(', '),
      (r.asked / Math.max(1, r.admitted)).toFixed(2),
      String(r.degraded),
      String(r.fairness.overtakes),
      `${r.fairness.maxOverMean.toFixed(2)} (${Math.round(r.fairness.maxWaitMs)} / ${Math.round(r.fairness.meanWaitMs)} ms)`,
      `${r.noise.othersCores.toFixed(2)}${r.noise.othersCores >= NOISY_CORES ? ' (noisy)' : ''}`,
    ]),
    [false, true, true, true, true, false, true, true, true, true, true, true],
  );
  const goals = rows.flatMap((r) => [
    {
      met: r.worstRate >= SECOND.limit * (1 - WITHIN) && r.perRule.every((p) => p.max <= p.rule.limit),
      text: `${r.label}: every full second within 2% of the limit (worst ${r.worstRate}, median ${r.medianRate} of ${SECOND.limit}) and never above it in any window of any rule (most: ${r.perRule.map((p) => `${p.max} of ${p.rule.limit}`).join(', ')})`,
    },
  ]);
  const notes = [
    '## Reading it',
    '',
    `- The minute rule of the pair cannot bind in a ${seconds} s run (${SECOND.limit}/s for ${seconds} s is ${SECOND.limit * seconds} of its ${MINUTE.limit}); the case shows that deciding both rules, all-or-nothing, costs no throughput. That the minute rule holds when it binds is tested deterministically (test/conformance/wait-to-consume.conformance.spec.ts) and across processes on scaled-down windows (test/redis/wait-to-consume-processes.spec.ts).`,
    '- Store calls per admission: each process\'s queue asks Redis once per admission, plus one refused call per wake-up (after sleeping exactly the refusal\'s retryAfterMs); waiters behind the head send nothing.',
    `- Refunds: ${rows.map((r) => `${r.label} ${r.refunds}`).join(', ')} (admissions in flight when their call was aborted at the end, given back; the witness still counts them, so a refund can only make a window look fuller than it was).`,
  ];
  return [header, '', '## Results', '', table, '', goalsSection(goals), '', ...notes, ''].join('\n');
}

async function main() {
  const { server, version } = await startGuardedServer();
  const url = `redis://127.0.0.1:${server.port}`;
  const admin = new Redis(url);
  try {
    const serverPid = await redisPid(admin);
    const rows = [];
    for (const testCase of CASES) {
      process.stderr.write(`${testCase.label}: ${PROCESSES} x ${WAITERS} waiters, ${MEASURED_MS / 1000} s\n`);
      rows.push(await runCase(url, admin, serverPid, testCase));
    }
    const markdown = report(version, rows);
    process.stdout.write(markdown);
    writeResult('acquire.md', markdown);
  } finally {
    await admin.quit().catch(() => admin.disconnect());
    await server.stop();
  }
}

runMain('acquire bench', main);
