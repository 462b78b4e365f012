// Redis instructions per sliding-window decision of the script alone, on a fixed clock: redis-server under callgrind
// runs N and then 2N EVALSHAs of lua/sliding-window.lua (a batch of 31 calls on 31 of 300 keys, or 31 lone calls in
// the short form), the keys written before in the state a scenario names; (I(2N) - I(N)) / 31N is one decision.
// The module's bench (redis-instructions.bench.mjs) runs on the wall clock, so the sliding window's cells, and its
// figures, move between runs; here they cannot, and two versions of the script compare within about 2%.
//
// Run (needs `valgrind` and `redis-server`; no build):
//   node test/bench/callgrind/sliding-window-script.bench.mjs [--lua <dir>] [--functions] [scenario ...]
// --lua: the folder holding sliding-window.lua and includes/ (default: this checkout's lua/), e.g. an older copy.
// --functions: the script as a function library (FUNCTION LOAD once, then FCALL), as RedisStore calls it on ioredis.
// Scenarios (default all): b1, b2, b10: each key holds 'b' and 1, 2 or 10 live cells, the current one among them
// (b1 is the store bench's usual state: its runs start on an empty Redis and last less than a 6 s cell); new: every
// decision on a key not yet written; lone-b1, lone-new: the same as lone calls; hot-b1: every batch's 31 calls on ONE
// key (b1), sent as the store sends a hot key's run ('31=c1', the key once); hot-repeated-b1: the same calls as the
// store sent them before runs on one key were decided at once ('31:c1', the key 31 times; the form an older --lua
// understands). Every decision is admitted.
import { Redis } from 'ioredis';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '../support/redis-process.mjs';

const SCENARIOS = ['b1', 'b2', 'b10', 'new', 'lone-b1', 'lone-new', 'hot-b1', 'hot-repeated-b1'];
const KEY_COUNT = 300;
const BATCH = 31;
const N = Number(process.env.CALLGRIND_N ?? 40);
const WINDOW_MS = 60_000;
const SEGMENTS = 10;
const CELL_US = (WINDOW_MS / SEGMENTS) * 1000;
/** 2026-01-01 plus 3 cells and a bit: inside a cell, far from its edges. */
const NOW_US = 1_767_225_600_000_000 + 3 * CELL_US + 1_234_567;
const DEADLINE = String(NOW_US + 1e12);
// The rule's definition, one argument; SW_BENCH_SPLIT_DEFINITION=1 sends its fields as arguments of their own, as a
// --lua from before they were joined takes them.
const DEFINITION = process.env.SW_BENCH_SPLIT_DEFINITION ? ['sw', '10000000', String(WINDOW_MS), '0', String(SEGMENTS)] : [`sw,10000000,${WINDOW_MS},0,${SEGMENTS}`];

const args = process.argv.slice(2);
const luaAt = args.indexOf('--lua');
const luaDir = luaAt >= 0 ? resolve(args.splice(luaAt, 2)[1]) : join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'lua');
const functions = args.includes('--functions') && args.splice(args.indexOf('--functions'), 1).length > 0;
const scenarios = args.length > 0 ? args : SCENARIOS;
const include = (name) => readFileSync(join(luaDir, 'includes', `${name}.lua`), 'utf8');
const code = readFileSync(join(luaDir, 'sliding-window.lua'), 'utf8').replace(/^--- @include "([\w-]+)"\s*$/gm, (_line, name) => include(name));
// Since the driver is a function (decide), a function library registers it, and an EVAL's script is its body
// (lib/stores/redis/lua-script.loader.ts, asScriptBody); an older driver is the script's body as it is.
const head = code.lastIndexOf('\nlocal function decide(KEYS, ARGV)\n');
if (functions && head < 0) throw new Error(`--functions: the driver in ${luaDir} is not a function`);
const script = head < 0 ? code : `${code.slice(0, head)}\n${code.slice(head + 35, code.lastIndexOf('\nend'))}\n`;
const library = `#!lua name=swbench\n${code}\nredis.register_function('swbench', decide)\n`;

console.log(`| scenario (${luaDir}${functions ? ', FCALL' : ''}) | Redis instructions / decision (N = ${N} x ${BATCH}) |\n| --- | ---: |`);
for (const scenario of scenarios) {
  if (!SCENARIOS.includes(scenario)) throw new Error(`unknown scenario ${scenario}: one of ${SCENARIOS.join(', ')}`);
  const once = await instructions(scenario, N);
  const twice = await instructions(scenario, 2 * N);
  console.log(`| ${scenario} | ${Math.round((twice - once) / (N * BATCH)).toLocaleString('en-US')} |`);
}

/** Total instructions of a redis-server under callgrind that decided `batches` x BATCH calls of `scenario`. */
async function instructions(scenario, batches) {
  const dir = mkdtempSync(join(tmpdir(), 'callgrind-sw-'));
  const port = await freePort();
  const out = join(dir, 'out');
  const server = spawn('valgrind', ['--tool=callgrind', `--callgrind-out-file=${out}`, 'redis-server', '--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--hz', '1'], { stdio: 'ignore' });
  const exited = new Promise((resolve) => server.once('exit', resolve));
  const client = new Redis({ port, retryStrategy: () => 100, maxRetriesPerRequest: null });
  client.on('error', () => undefined); // refused connections while valgrind starts the server
  try {
    await client.ping();
    const sha = await client.script('LOAD', script);
    if (functions) await client.call('FUNCTION', 'LOAD', library);
    const run = (keyCount, ...rest) => (functions ? client.call('FCALL', 'swbench', keyCount, ...rest) : client.evalsha(sha, keyCount, ...rest));
    const batch = (keys, now) => run(keys.length, ...keys, String(now), DEADLINE, '1', '1', '0', `${keys.length}:c1`, ...DEFINITION);
    const lone = (key) => run(1, key, String(NOW_US), DEADLINE, 'c', ...DEFINITION);
    const hot = (key) => run(1, key, String(NOW_US), DEADLINE, '1', '1', '0', `${BATCH}=c1`, ...DEFINITION);
    const decide = (next) => {
      if (scenario.startsWith('lone')) return Promise.all(Array.from({ length: BATCH }, () => lone(next())));
      if (scenario.startsWith('hot-repeated')) return batch(Array.from({ length: BATCH }, () => names[0]), NOW_US);
      if (scenario.startsWith('hot')) return hot(names[0]);
      return batch(Array.from({ length: BATCH }, next), NOW_US);
    };
    const names = Array.from({ length: KEY_COUNT }, (_, i) => `sw6000:k${i}`);
    const cells = Number(/b(\d+)$/.exec(scenario)?.[1] ?? 0);
    // The oldest cell first, so that 'b' is the first cell's, as in a key written over time.
    for (let back = cells - 1; back >= 0; back--) {
      for (let i = 0; i < KEY_COUNT; i += BATCH) await batch(names.slice(i, i + BATCH), NOW_US - back * CELL_US);
    }
    let cursor = 0;
    const nextKey = () => (cells > 0 ? names[cursor++ % KEY_COUNT] : `sw6000:new${cursor++}`);
    for (let b = 0; b < batches; b++) {
      const replies = await decide(nextKey);
      if (replies.length !== BATCH || replies.some((r) => typeof r !== 'number' || r < 0)) throw new Error(`not every decision was admitted: ${JSON.stringify(replies)}`);
    }
    // Not awaited: the server closes the connection instead of replying.
    client.shutdown('NOSAVE').catch(() => undefined);
    await exited;
    return Number(/^(?:summary|totals):\s*(\d+)/m.exec(readFileSync(out, 'utf8'))[1]);
  } finally {
    client.disconnect();
    server.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
}
