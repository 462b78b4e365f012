// Every benchmark, one after the other, each in its own process with its own throwaway redis-server: accuracy,
// memory, scale, store, http, resilience, acquire, and callgrind (instructions per decision; skipped, and said so, when
// valgrind is not installed). Then writes the index test/bench/results/README.md: what ran, how long it took, each
// report's goals and charts, with links. The store and HTTP benches also rewrite their sections of the
// repository README (between <!-- bench:store --> / <!-- bench:http --> markers) on a full run.
//
// Run: `npm run bench` (builds first). Env is passed on to every bench: BENCH_SECONDS (measured period of each
// load case; scale and store default to 2, http to 3), BENCH_ROUNDS (store and http: default 5, the least they
// score goals on; scale: default 2), BENCH_QUIET_WAIT_S, MEMORY_KEYS, ACCURACY_WINDOWS, ACCURACY_LIMIT,
// CALLGRIND_N. BENCH_ONLY=accuracy,memory runs only the benches named (file name without .bench.mjs; "callgrind");
// the index still lists the others' last reports, marked as not from this run (BENCH_ONLY=index rewrites only it).
// Not part of `npm test` or CI: it takes minutes, and its figures depend on the machine.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { RESULTS_DIR, environmentHeader, runMain, writeResult } from './support/environment.mjs';
import { redisServerVersion } from './support/redis-process.mjs';
import { markdownTable } from './support/report.mjs';

const BENCHES = [
  { file: 'accuracy.bench.mjs', report: 'accuracy.md', about: 'admitted requests and boundary bursts on replayed traces, ours vs peers' },
  { file: 'memory.bench.mjs', report: 'memory.md', about: 'Redis bytes per key at limits 10, 100, 1000, ours vs peers' },
  { file: 'scale.bench.mjs', report: 'scale.md', about: 'decisions/s as keys grow (1 to 1,000,000) and as the sliding log limit grows' },
  {
    file: 'store.bench.mjs',
    report: 'store.md',
    // gc() between cases: a case must not pay for the previous one's garbage (a million keys' worth at most).
    nodeArgs: ['--expose-gc'],
    about: 'decisions/s, latency and Redis CPU per decision through the module, Redis / Cluster / memory, vs rate-limiter-flexible and raw EVALSHA, interleaved rounds',
  },
  { file: 'http.bench.mjs', report: 'http.md', about: 'HTTP req/s through the Nest guard on Express and Fastify, vs no guard and @nestjs/throttler, interleaved rounds' },
  { file: 'resilience.bench.mjs', report: 'resilience.md', about: 'decision latency with Redis stalled or killed, breaker on/off; Redis calls saved by the block cache' },
  { file: 'acquire.bench.mjs', report: 'acquire.md', about: 'waitToConsume from 4 processes x 50 waiters on one key: rate per second against 100/s (and 100/s + 5,000/min), never above it, ordering across processes' },
  { file: 'hotkey.bench.mjs', report: 'hotkey.md', about: 'one hot key from 4 app processes, exact against local budgets (localBudget), on one redis-server and a 3-master cluster: decisions/s, Redis CPU, admissions per window never above the limit, shortfall within the bound' },
  {
    file: 'callgrind/instructions.bench.mjs',
    name: 'callgrind',
    report: 'callgrind.md',
    optional: true,
    needs: 'valgrind',
    // It prints its table; kept as the report, under a header.
    capture: 'Instructions per decision (callgrind)',
    about: 'instructions per decision (valgrind callgrind): memory store, module, guard path, RateLimiterMemory; immune to machine noise',
  },
];

const benchName = (bench) => bench.name ?? bench.file.replace('.bench.mjs', '');

/** Whether a command runs (`<command> --version` exits 0). */
function installed(command) {
  const found = spawnSync(command, ['--version'], { stdio: 'ignore' });
  return !found.error && found.status === 0;
}

/**
 * Runs one bench in a child process (its tables go straight to this terminal); resolves its exit code and time.
 * A bench with `capture` prints its report instead of writing one: its stdout is kept as `report`, under a header.
 */
function runBench(bench) {
  const path = fileURLToPath(new URL(bench.file, import.meta.url));
  const started = performance.now();
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [...(bench.nodeArgs ?? []), path], { stdio: ['ignore', bench.capture ? 'pipe' : 'inherit', 'inherit'], env: process.env });
    let out = '';
    child.stdout?.on('data', (chunk) => {
      out += chunk;
      process.stdout.write(chunk);
    });
    child.on('exit', (code, signal) => {
      const result = { code: code ?? (signal ? 1 : 0), seconds: (performance.now() - started) / 1000 };
      if (bench.capture && result.code === 0) writeResult(bench.report, `${environmentHeader(bench.capture, redisServerVersion())}\n\n## Results\n\n${out.trim()}\n`);
      resolve(result);
    });
    child.on('error', () => resolve({ code: 1, seconds: (performance.now() - started) / 1000 }));
  });
}

/** The "## Goals" section of a report (without its heading), or ''. */
function goalsOf(markdown) {
  const match = /\n## Goals\n([\s\S]*?)(?=\n## |\s*$)/.exec(markdown);
  return match ? match[1].trim() : '';
}

/** The first markdown table of a report, or ''. */
function firstTable(markdown) {
  return /(?:^\|.*\|$\n?)+/m.exec(markdown)?.[0].trim() ?? '';
}

const dateOf = (markdown) => /^- Date: (.+)$/m.exec(markdown)?.[1] ?? 'unknown';

/** The results' SVGs that belong to a report: `<name>.svg` or `<name>-*.svg`. */
function chartsOf(report, files) {
  const base = report.replace(/\.md$/, '');
  return files.filter((f) => f.endsWith('.svg') && (f === `${base}.svg` || f.startsWith(`${base}-`)));
}

function index(runs) {
  const files = existsSync(RESULTS_DIR) ? readdirSync(RESULTS_DIR).sort() : [];
  const statusTable = markdownTable(
    ['bench', 'measures', 'this run', 'time s', 'report'],
    runs.map((r) => [
      r.file,
      r.about,
      r.skipped ? r.skipped : r.code === 0 ? 'ok' : `FAILED (exit ${r.code})`,
      r.skipped ? '-' : r.seconds.toFixed(0),
      files.includes(r.report) ? `[${r.report}](${r.report})` : '-',
    ]),
    [false, false, false, true, false],
  );
  const sections = [];
  const section = (report, stale) => {
    const markdown = readFileSync(new URL(report, RESULTS_DIR), 'utf8');
    const title = /^# (.+)$/m.exec(markdown)?.[1] ?? report;
    sections.push(`## [${title}](${report})`, '', `Report of ${dateOf(markdown)}${stale ? ' (not from this run)' : ''}.`, '');
    // The goals when the report states some; otherwise its first table, as the headline.
    const headline = goalsOf(markdown) || firstTable(markdown);
    if (headline) sections.push(headline, '');
    for (const svg of chartsOf(report, files)) sections.push(`![${svg}](${svg})`, '');
  };
  for (const run of runs) {
    if (files.includes(run.report)) section(run.report, run.code !== 0 || run.skipped);
  }
  // Reports this index does not know by name (another bench's file name): listed as found, with their own date.
  const known = new Set(['README.md', ...runs.map((r) => r.report)]);
  for (const file of files.filter((f) => f.endsWith('.md') && !known.has(f))) section(file, false);
  return [
    environmentHeader('Benchmarks', redisServerVersion(), [
      'Run with `npm run bench` (builds, then runs every bench below in turn, each against a redis-server it starts on a free port and stops)',
      'Figures come from a shared 2-core machine: compare ratios within one report, not absolute numbers across runs',
    ]),
    '',
    statusTable,
    '',
    ...sections,
  ].join('\n');
}

/** BENCH_ONLY as a set of bench names, or null for all. */
function selected() {
  const only = process.env.BENCH_ONLY?.split(',').map((s) => s.trim()).filter(Boolean);
  if (!only?.length) return null;
  const names = [...BENCHES.map(benchName), 'index'];
  const unknown = only.filter((n) => !names.includes(n));
  if (unknown.length) throw new Error(`BENCH_ONLY names unknown benches: ${unknown.join(', ')} (known: ${names.join(', ')})`);
  return new Set(only);
}

async function main() {
  const only = selected();
  const runs = [];
  for (const bench of BENCHES) {
    if (only && !only.has(benchName(bench))) {
      runs.push({ ...bench, skipped: 'not selected (BENCH_ONLY)', code: 0 });
      continue;
    }
    if (bench.optional && !existsSync(new URL(bench.file, import.meta.url))) {
      runs.push({ ...bench, skipped: 'skipped (file absent)', code: 0 });
      continue;
    }
    if (bench.needs && !installed(bench.needs)) {
      runs.push({ ...bench, skipped: `skipped (${bench.needs} is not installed)`, code: 0 });
      continue;
    }
    process.stderr.write(`\n=== ${bench.file} ===\n`);
    runs.push({ ...bench, ...(await runBench(bench)) });
  }
  writeResult('README.md', index(runs));
  const failed = runs.filter((r) => r.code !== 0);
  if (failed.length > 0) {
    process.stderr.write(`Failed: ${failed.map((r) => r.file).join(', ')}\n`);
    process.exitCode = 1;
  }
}

runMain('bench', main);
