// Redis instructions per decision, counted by valgrind's callgrind on redis-server: the Redis CPU a decision costs,
// which machine noise cannot move (the store bench's Redis CPU per decision moves with it). Each subject runs N
// decisions and then 2N on a fresh redis-server under callgrind; (I(2N) - I(N)) / N is one decision's cost, the
// server's start-up, the script load and the warm-up cancelling out.
//
// The server runs with hz 1: its timer work grows with wall time, which callgrind stretches and varies.
// The load is deterministic, so that batches are too: groups of 32 calls made in one turn, the next group once
// the last has settled. With coalescing on, a group is one lone call sent at once and a batch of the other 31 (a
// closed loop at 200 in flight would batch by timing, and a slower app would mean smaller batches). RLF makes one
// EVALSHA per decision, as always. Every decision must be admitted and none degraded, or the run fails.
//
// Run (after `npm run build`; needs `valgrind` and `redis-server`):
//   node test/bench/callgrind/redis-instructions.bench.mjs          all subjects, N = 5000 (about 3 minutes)
//   CALLGRIND_N=10000 node test/bench/callgrind/redis-instructions.bench.mjs fixed-window rlf
// Subjects: each algorithm through the module with coalescing on (fixed-window, sliding-window, token-bucket, gcra,
// sliding-log), `<algorithm>-off` with coalescing off, and rlf (RateLimiterRedis, auto-pipelining off); any of ours
// followed by `-eval` with `functions: false` (EVALSHA, not the function library's FCALL).
import { NestFactory } from '@nestjs/core';
import { Redis } from 'ioredis';
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RateLimiterRedis } from 'rate-limiter-flexible';
import { RateLimitModule, RateLimitService } from '../../../dist/index.js';
import { ruleFor } from '../store/subjects.mjs';
import { keySequence } from '../support/load.mjs';
import { freePort } from '../support/redis-process.mjs';

const ALGORITHMS = ['fixed-window', 'sliding-window', 'token-bucket', 'gcra', 'sliding-log'];
// Coalescing off is also what every lone call costs (an app with one decision in flight at a time).
const SUBJECTS = [...ALGORITHMS, ...ALGORITHMS.map((algorithm) => `${algorithm}-off`), 'rlf'];
const GROUP = 32;
const WINDOW_S = 60;
/** Under callgrind Redis runs some 50 times slower: far past the module's 50 ms default. */
const TIMEOUT_MS = 60_000;

try {
  execFileSync('valgrind', ['--version'], { stdio: 'ignore' });
} catch {
  console.error('valgrind is missing: apt-get install -y valgrind');
  process.exit(1);
}
const n = Number(process.env.CALLGRIND_N ?? 5_000);
const subjects = process.argv.slice(2).length > 0 ? process.argv.slice(2) : SUBJECTS;
console.log(`| subject | Redis instructions / decision (N = ${n}) |\n| --- | ---: |`);
for (const subject of subjects) {
  const once = await instructions(subject, n);
  const twice = await instructions(subject, 2 * n);
  console.log(`| ${subject} | ${Math.round((twice - once) / n).toLocaleString('en-US')} |`);
}

/** Total instructions of a redis-server under callgrind that served `decisions` decisions of `subject`. */
async function instructions(subject, decisions) {
  const dir = mkdtempSync(join(tmpdir(), 'callgrind-redis-'));
  const port = await freePort();
  const out = join(dir, 'out');
  const server = spawn('valgrind', ['--tool=callgrind', `--callgrind-out-file=${out}`, 'redis-server', '--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--hz', '1'], { stdio: 'ignore' });
  const exited = new Promise((resolve) => server.once('exit', resolve));
  // Retries while valgrind starts the server; one command at a time, so nothing is sent twice.
  const admin = new Redis({ port, retryStrategy: () => 100, maxRetriesPerRequest: null });
  admin.on('error', () => undefined); // refused connections while valgrind starts the server
  try {
    await admin.ping();
    const subjectRun = await open(subject, port);
    const keys = keySequence({ keyCount: 10_000 });
    await group(subjectRun.call, keys); // loads the script
    for (let done = 0; done < decisions; done += GROUP) await group(subjectRun.call, keys);
    await subjectRun.close();
    // Not awaited: the server closes the connection instead of replying.
    admin.shutdown('NOSAVE').catch(() => undefined);
    await exited;
    return Number(/^(?:summary|totals):\s*(\d+)/m.exec(readFileSync(out, 'utf8'))[1]);
  } finally {
    admin.disconnect();
    server.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
}

/** GROUP calls in one turn, all settled. */
async function group(call, keys) {
  const outcomes = await Promise.all(Array.from({ length: GROUP }, () => call(keys.next())));
  const bad = outcomes.find((o) => o !== true);
  if (bad !== undefined) throw new Error(`a decision was not admitted by the store: ${JSON.stringify(bad)}`);
}

/** `call(key)` resolving to true when the store admitted, else the decision; and `close()`. */
async function open(subject, port) {
  if (subject === 'rlf') {
    const client = new Redis({ port });
    const limiter = new RateLimiterRedis({ storeClient: client, points: 10_000_000, duration: WINDOW_S });
    return { call: (key) => limiter.consume(key).then(() => true, (refusal) => refusal), close: () => client.quit() };
  }
  const functions = !subject.endsWith('-eval');
  const coalesce = !subject.replace(/-eval$/, '').endsWith('-off');
  const algorithm = subject.replace(/-eval$/, '').replace(/-off$/, '');
  const rule = ruleFor(algorithm, algorithm === 'sliding-log' ? 1_000 : 10_000_000);
  const options = { store: { host: '127.0.0.1', port }, timeoutMs: TIMEOUT_MS, metrics: false, ...(coalesce ? {} : { coalesce: false }), ...(functions ? {} : { functions: false }) };
  const app = await NestFactory.createApplicationContext(RateLimitModule.forRoot(options), { logger: ['error'] });
  const service = app.get(RateLimitService);
  const call = (key) => service.decide([{ key, rule }]).then((r) => (r.allowed && !r.decisions[0].degraded ? true : r.decisions[0]));
  return { call, close: () => app.close() };
}
