// Reads V8 .cpuprofile files (from BENCH_HTTP_CPU_PROF=<dir> npm run bench:http) and prints where the app's
// time went: share per area (this package's dist, Nest core/common, express, ioredis, throttler, node internals,
// GC, idle), the hottest functions by self time, and the inclusive time of chosen functions (canActivate, ...).
//
//   node test/bench/http/cpu-profile-summary.mjs <file.cpuprofile>... [--top 25] [--focus name1,name2] [--any a,b]
//
// Names may be qualified by script file, e.g. handleRequest@throttler.guard.js (other packages have their own).
// --any: share of busy time with at least one of these functions on the stack (e.g. every entry point of a guard,
// since an async function resumed after an await shows up at the bottom of its own stack, not under its caller).
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';

const args = process.argv.slice(2);
const option = (name, fallback) => {
  const i = args.indexOf(name);
  if (i < 0) return fallback;
  const [value] = args.splice(i, 2).slice(1);
  return value;
};
const TOP = Number(option('--top', '25'));
const FOCUS = option('--focus', 'canActivate,decide,consumeAll,consume,rateLimitHeaders,setHeaders,clientIp,groupIp,getTracker,generateKey,increment,sha256,evalsha,sendCommand,routePolicies')
  .split(',')
  .filter(Boolean);
const ANY = option('--any', 'canActivate@rate-limit.guard.js,canActivate@throttler.guard.js,handleRequest@throttler.guard.js').split(',').filter(Boolean);
const files = args;
if (files.length === 0) {
  process.stderr.write('usage: node test/bench/http/cpu-profile-summary.mjs <file.cpuprofile>... [--top N] [--focus a,b]\n');
  process.exit(2);
}

/** The area a stack frame belongs to, from its script URL. */
function area(url, functionName) {
  if (functionName === '(garbage collector)') return 'GC';
  if (functionName === '(idle)' || functionName === '(program)') return functionName;
  if (!url) return 'native / builtins';
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1];
  if (url.includes('/dist/')) return 'nestjs-redis-rate-limit (dist)';
  if (url.startsWith('node:')) return 'node internals';
  return url;
}

const pct = (n, total) => `${((n / total) * 100).toFixed(1)}%`;
const ms = (us) => `${(us / 1000).toFixed(0)} ms`;

function summarise(file) {
  const profile = JSON.parse(readFileSync(file, 'utf8'));
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  // Self time per node from the samples and their time deltas.
  const self = new Map();
  profile.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
  const total = [...self.values()].reduce((a, b) => a + b, 0);
  const idle = [...self.entries()].filter(([id]) => byId.get(id).callFrame.functionName === '(idle)').reduce((a, [, t]) => a + t, 0);
  const busy = total - idle;

  const areas = new Map();
  const functions = new Map();
  const focus = new Map(FOCUS.map((f) => [f, 0]));
  const anySet = new Set(ANY);
  let anyTime = 0;
  for (const [id, t] of self) {
    const { functionName, url, lineNumber } = byId.get(id).callFrame;
    const a = area(url, functionName);
    areas.set(a, (areas.get(a) ?? 0) + t);
    const key = `${functionName || '(anonymous)'}  [${a}${url ? ` ${basename(url)}:${lineNumber + 1}` : ''}]`;
    functions.set(key, (functions.get(key) ?? 0) + t);
    // Inclusive time of focus functions: each sample counts once per distinct focus name on its stack.
    const seen = new Set();
    let hit = false;
    for (let n = id; n !== undefined; n = parent.get(n)) {
      const frame = byId.get(n).callFrame;
      for (const name of [frame.functionName, `${frame.functionName}@${basename(frame.url)}`]) {
        if (anySet.has(name)) hit = true;
        if (focus.has(name) && !seen.has(name)) {
          seen.add(name);
          focus.set(name, focus.get(name) + t);
        }
      }
    }
    if (hit) anyTime += t;
  }

  const lines = [`== ${basename(file)}: ${ms(total)} sampled, ${ms(busy)} busy (not idle)`, '', 'By area (share of busy time):'];
  for (const [a, t] of [...areas].filter(([a]) => a !== '(idle)').sort((x, y) => y[1] - x[1])) lines.push(`  ${pct(t, busy).padStart(6)}  ${a}`);
  lines.push('', `Top ${TOP} functions by self time (share of busy time):`);
  for (const [f, t] of [...functions].filter(([f]) => !f.startsWith('(idle)')).sort((x, y) => y[1] - x[1]).slice(0, TOP)) lines.push(`  ${pct(t, busy).padStart(6)}  ${f}`);
  lines.push('', 'Inclusive time of named functions (share of busy time):');
  for (const [f, t] of [...focus].filter(([, t]) => t > 0).sort((x, y) => y[1] - x[1])) lines.push(`  ${pct(t, busy).padStart(6)}  ${f}`);
  lines.push('', `Any of ${ANY.join(', ')} on the stack: ${pct(anyTime, busy)} of busy time`);
  return lines.join('\n');
}

for (const file of files) process.stdout.write(`${summarise(file)}\n\n`);
