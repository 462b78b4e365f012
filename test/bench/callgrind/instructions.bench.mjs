// Instructions per decision, counted by valgrind's callgrind: unlike time, they do not move with machine noise.
// Each subject runs N decisions and then 2N in two callgrind runs (same warm-up); (I(2N) - I(N)) / N is the cost
// of one decision, start-up, module loading and JIT warm-up cancelling out.
//
// Run (after `npm run build`; needs `valgrind`, Debian/Ubuntu: apt-get install -y valgrind):
//   node test/bench/callgrind/instructions.bench.mjs            all subjects, N = 100000 (about 10 minutes)
//   CALLGRIND_N=200000 node test/bench/callgrind/instructions.bench.mjs bare module
// At N = 20000 the differences were unusable (RateLimiterMemory came out negative): one-off JIT and GC costs did
// not cancel out. Keep N large.
// Subjects: bare (MemoryStore.consume), module (RateLimitService.decide, memory store, metrics on), guard
// (RateLimitGuard.canActivate on a Nest execution context over node:http request/response objects),
// module-otel (module, plus openTelemetry on: an SDK MeterProvider and the span attributes on a recording span made
// active around the loop by the AsyncLocalStorage context manager), module-otel-metrics (module, plus OpenTelemetry's
// metrics only), context (the same request, response and context built, no guard: subtract it from guard), rlf
// (rate-limiter-flexible RateLimiterMemory.consume). Admit-all (limit 1e7 per minute, 10,000 keys), fixed window.
// bare-refuse, module-refuse, rlf-refuse: the same, nearly all refused (limit 1 per hour: the warm-up's first pass
// takes every key's unit, so every measured decision is a refusal; each subject maps its answer to true / false in
// one `then`, as the store bench does, RLF's refusal being a rejection).
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const SUBJECTS = ['bare', 'module', 'module-otel', 'module-otel-metrics', 'guard', 'context', 'rlf', 'bare-refuse', 'module-refuse', 'rlf-refuse'];
const here = fileURLToPath(import.meta.url);

if (process.argv[2] === '--child') {
  await child(process.argv[3], Number(process.argv[4]));
} else {
  await main();
}

async function main() {
  try {
    execFileSync('valgrind', ['--version'], { stdio: 'ignore' });
  } catch {
    console.error('valgrind is missing: apt-get install -y valgrind');
    process.exit(1);
  }
  const n = Number(process.env.CALLGRIND_N ?? 100_000);
  const subjects = process.argv.slice(2).length > 0 ? process.argv.slice(2) : SUBJECTS;
  console.log(`| subject | instructions / decision (N = ${n}) |\n| --- | ---: |`);
  for (const subject of subjects) {
    const once = instructions(subject, n);
    const twice = instructions(subject, 2 * n);
    console.log(`| ${subject} | ${Math.round((twice - once) / n).toLocaleString('en-US')} |`);
  }
}

/** Total instructions callgrind counts for one run of `decisions` decisions (all threads). */
function instructions(subject, decisions) {
  const dir = mkdtempSync(join(tmpdir(), 'callgrind-'));
  try {
    const run = spawnSync(
      'valgrind',
      ['--tool=callgrind', `--callgrind-out-file=${join(dir, 'out.%p')}`, '--dump-instr=no', '--collect-jumps=no', process.execPath, '--single-threaded', '--expose-gc', '--predictable-gc-schedule', here, '--child', subject, String(decisions)],
      { encoding: 'utf8', maxBuffer: 1 << 26 },
    );
    if (run.status !== 0) throw new Error(`callgrind run of ${subject} failed:\n${run.stderr.slice(-2000)}`);
    let total = 0;
    for (const file of readdirSync(dir)) {
      const summary = /^(?:summary|totals):\s*(\d+)/m.exec(readFileSync(join(dir, file), 'utf8'));
      if (summary) total += Number(summary[1]);
    }
    return total;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function child(subject, decisions) {
  const KEYS = 10_000;
  const keys = Array.from({ length: KEYS }, (_, i) => `203.0.${(i >> 8) & 255}.${i & 255}`);
  const call = await subjectCall(subject);
  const loop = async () => {
    // The same warm-up whatever N: every key once, then 20,000 more decisions, so the JIT has settled.
    for (let i = 0; i < KEYS + 20_000; i++) await call(keys[i % KEYS]);
    // A full collection on either side of the measured loop, so that both runs end with the same heap to collect.
    globalThis.gc();
    for (let i = 0; i < decisions; i++) await call(keys[i % KEYS]);
    globalThis.gc();
  };
  await (subject === 'module-otel' ? inActiveSpan(loop) : loop());
  process.exit(0);
}

/** OpenTelemetry's SDK registered as an app registers it: a MeterProvider with a reader, a tracer, the ALS context manager. */
async function openTelemetrySdk() {
  const { context, metrics, trace } = await import('@opentelemetry/api');
  const { AsyncLocalStorageContextManager } = await import('@opentelemetry/context-async-hooks');
  const { AggregationTemporality, InMemoryMetricExporter, MeterProvider, PeriodicExportingMetricReader } = await import('@opentelemetry/sdk-metrics');
  const { TracerProvider } = await import('@opentelemetry/sdk-trace');
  const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  metrics.setGlobalMeterProvider(new MeterProvider({ readers: [new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 })] }));
  trace.setGlobalTracerProvider(new TracerProvider());
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  return { context, trace };
}

/** Runs `fn` with one recording span active throughout: every decision sets its attributes on it. */
async function inActiveSpan(fn) {
  const { trace } = await import('@opentelemetry/api');
  return trace.getTracer('bench').startActiveSpan('bench', async (span) => {
    await fn();
    span.end();
  });
}

async function subjectCall(subject) {
  const lib = await import('../../../dist/index.js');
  if (subject.endsWith('-refuse')) return refusingCall(lib, subject.slice(0, -'-refuse'.length));
  const rule = lib.defineRule({ algorithm: 'fixed-window', limit: 10_000_000, window: 60_000 }, 'bench');
  if (subject === 'bare') {
    const store = new lib.MemoryStore();
    return (key) => store.consume(key, rule);
  }
  if (subject === 'rlf') {
    const { RateLimiterMemory } = await import('rate-limiter-flexible');
    const limiter = new RateLimiterMemory({ points: 10_000_000, duration: 60 });
    return (key) => limiter.consume(key);
  }
  const { service, app } = await moduleService(lib, subject);
  if (subject.startsWith('module')) return (key) => service.decide([{ key, rule }]);
  if (subject !== 'guard' && subject !== 'context') throw new Error(`Unknown subject ${subject}: one of ${SUBJECTS.join(', ')}`);
  const { Reflector } = await import('@nestjs/core');
  const { ExecutionContextHost } = await import('@nestjs/core/helpers/execution-context-host.js');
  const { IncomingMessage, ServerResponse } = await import('node:http');
  const { Socket } = await import('node:net');
  const { RateLimitPolicies } = await import('../../../dist/config/rate-limit.policies.js');
  const { RATE_LIMIT_SETTINGS } = await import('../../../dist/interfaces/rate-limit.constants.js');
  const guard = new lib.RateLimitGuard(app.get(Reflector), app.get(lib.RateLimitService), app.get(RateLimitPolicies), app.get(RATE_LIMIT_SETTINGS));
  class BenchController {
    handler() {}
  }
  const socket = new Socket();
  // One request and response per decision, as a server has; what the guard adds is what is counted on top.
  return (key) => {
    const request = new IncomingMessage(socket);
    Object.defineProperty(request, 'ip', { value: key });
    const context = new ExecutionContextHost([request, new ServerResponse(request), () => {}], BenchController, BenchController.prototype.handler);
    context.setType('http');
    return subject === 'guard' ? guard.canActivate(context) : Promise.resolve(true);
  };
}

/** The module in an application context, memory store, metrics on (and OpenTelemetry for the module-otel subjects). */
async function moduleService(lib, subject) {
  await import('reflect-metadata');
  const { NestFactory } = await import('@nestjs/core');
  const { default: promClient } = await import('prom-client');
  const options = { store: 'memory', metrics: { registry: new promClient.Registry() }, defaultRule: { algorithm: 'fixed-window', limit: 10_000_000, window: 60_000 } };
  if (subject.startsWith('module-otel')) {
    await openTelemetrySdk();
    options.openTelemetry = subject === 'module-otel' ? true : { spanAttributes: false };
  }
  const app = await NestFactory.createApplicationContext(lib.RateLimitModule.forRoot(options), { logger: ['error'] });
  return { app, service: app.get(lib.RateLimitService) };
}

/** The refusing subjects: limit 1 per hour (an hour, so that no window ends in a run however slow callgrind makes it). */
async function refusingCall(lib, subject) {
  const rule = lib.defineRule({ algorithm: 'fixed-window', limit: 1, window: 3_600_000 }, 'bench');
  const allowedOf = (decision) => decision.allowed;
  if (subject === 'bare') {
    const store = new lib.MemoryStore();
    return (key) => store.consume(key, rule).then(allowedOf);
  }
  if (subject === 'rlf') {
    const { RateLimiterMemory } = await import('rate-limiter-flexible');
    const limiter = new RateLimiterMemory({ points: 1, duration: 3_600 });
    return (key) => limiter.consume(key).then(() => true, () => false);
  }
  if (subject !== 'module') throw new Error(`Unknown subject ${subject}-refuse: one of ${SUBJECTS.join(', ')}`);
  const { service } = await moduleService(lib, subject);
  return (key) => service.decide([{ key, rule }]).then(allowedOf);
}
