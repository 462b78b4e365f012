// One app process of the hot-key bench: a Nest application context on the BUILT package, deciding on one key through
// RateLimitService.decide (the guard's path) against the Redis (or Cluster) given in argv. Says "ready", then takes one
// JSON command per line on stdin: { rule, key, inFlight, startAt, warmupMs, measureMs, windowMs, witness, yieldEach, noop }
// runs `inFlight` loops that each decide, then (`yieldEach`) yield to the event loop, as requests arriving from
// sockets do, or else go on at once, as the store bench's closed loops do; and prints one JSON line:
// decisions, admitted, refused, degraded and errors counted in the measured period, the process's CPU (µs), and
// with `witness` the admissions per window of `windowMs` (epoch-aligned, as the fixed window's), each placed by its
// own clock reads before and after its decision (Date.now, the clock Redis's TIME reads on this host): those whose
// bracket lies in one window are counted there, the others sent as brackets. { exit: true } closes and exits.
import 'reflect-metadata';
import { createInterface } from 'node:readline';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';

const dist = process.env.RATE_LIMIT_DIST ?? new URL('../../../dist/index.js', import.meta.url).href;
const { RateLimitModule, RateLimitService } = await import(dist);
const [storeJson, rulesJson, keyPrefix] = process.argv.slice(2);
const store = JSON.parse(storeJson);
const rules = JSON.parse(rulesJson);

class HotKeyModule {}
// Only Redis admits here: a failure policy that refuses, and a timeout a loaded machine keeps to.
Module({ imports: [RateLimitModule.forRoot({ store, rules, keyPrefix, failurePolicy: 'closed', timeoutMs: 5_000 })] })(HotKeyModule);
const app = await NestFactory.createApplicationContext(HotKeyModule, { logger: ['error'] });
const limits = app.get(RateLimitService);
const yieldTurn = () => new Promise((resolve) => setImmediate(resolve));

/** The reference's decision (`noop`): admitted, by no limiter. */
const NOOP = Object.freeze({ allowed: true, decisions: Object.freeze([Object.freeze({ allowed: true, limit: 1, remaining: 1, resetAfterMs: 0, retryAfterMs: 0 })]) });

async function run({ rule, key, inFlight, startAt, warmupMs, measureMs, windowMs, witness, yieldEach = true, noop = false }) {
  const entries = [{ key, rule: limits.rule(rule) }];
  // `noop`: the loops with a decide that only returns a resolved promise, what this harness allows.
  const decide = noop ? () => Promise.resolve(NOOP) : (e) => limits.decide(e);
  // Every process starts at the same instant.
  if (startAt > Date.now()) await new Promise((resolve) => setTimeout(resolve, startAt - Date.now()));
  const started = startAt;
  const measureFrom = started + warmupMs;
  const until = measureFrom + measureMs;
  let cpuFrom;
  const counts = { decisions: 0, admitted: 0, refused: 0, degraded: 0, errors: 0 };
  const definite = new Map();
  const straddling = [];
  const w = windowMs;
  async function loop() {
    for (;;) {
      const before = Date.now();
      if (before >= until) return;
      // Read here, not by a timer: a loop that does not yield never lets one fire.
      if (cpuFrom === undefined && before >= measureFrom) cpuFrom = process.cpuUsage();
      let result;
      try {
        result = await decide(entries);
      } catch {
        if (before >= measureFrom) counts.errors++;
        await yieldTurn();
        continue;
      }
      const after = Date.now();
      if (before >= measureFrom && after < until) {
        counts.decisions++;
        if (result.decisions.some((d) => d.degraded)) counts.degraded++;
        if (result.allowed) counts.admitted++;
        else counts.refused++;
      }
      if (witness && result.allowed && !result.decisions.some((d) => d.degraded)) {
        const first = Math.floor(before / w);
        const last = Math.floor(after / w);
        if (first === last) definite.set(first, (definite.get(first) ?? 0) + 1);
        else straddling.push([before, after]);
      }
      if (yieldEach) await yieldTurn();
    }
  }
  await Promise.all(Array.from({ length: inFlight }, loop));
  const cpu = process.cpuUsage(cpuFrom);
  return { ...counts, cpuUs: cpu.user + cpu.system, definite: [...definite], straddling, budgets: limits.budgets?.size ?? 0 };
}

process.stdout.write('ready\n');
for await (const line of createInterface({ input: process.stdin })) {
  const command = JSON.parse(line);
  if (command.exit) break;
  const result = await run(command);
  // Units held go back between runs, so that each run starts from what the store holds.
  limits.budgets?.clear();
  await limits.budgets?.settled();
  process.stdout.write(JSON.stringify(result) + '\n');
}
await app.close();
process.exit(0);
