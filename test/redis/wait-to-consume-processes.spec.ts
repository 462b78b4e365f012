/**
 * waitToConsume across OS processes on one Redis: each process is a Nest application context on the BUILT package
 * (test/redis/fixtures/waiter.mjs; `npm test` builds before jest runs) with waiters queued on one key under two
 * fixed-window rules. Each admission is witnessed independently of the decisions (Redis TIME before and after its
 * call, appended to a list), and the test counts them per window of each rule: no window holds more than its limit.
 * Counts only, never speed: how long the run takes depends on the machine, what it admits does not.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { assertBuilt } from '../compat/sandbox.js';
import { killChildrenAfterEach, nextLine } from '../support/child-processes.js';
import { startRedis, uniquePrefix, type TestRedis } from '../support/redis-server.js';

const WAITER = fileURLToPath(new URL('./fixtures/waiter.mjs', import.meta.url));
const WINDOWS = new URL('../bench/support/admission-windows.mjs', import.meta.url).href;
const PROCESSES = 3;
const WAITERS = 8;
const ROUNDS = 3;
/** A burst rule and a sustained one, as a provider's 100/s and 5,000/min, scaled down so the test takes seconds. */
const RULES = {
  burst: { algorithm: 'fixed-window', limit: 10, window: 250 },
  sustained: { algorithm: 'fixed-window', limit: 30, window: 1_000 },
} as const;

interface Windows {
  countPerWindow(brackets: { beforeUs: number; afterUs: number }[], windowMs: number, limit: number): { counts: Map<number, number>; max: number; straddling: number };
  parseBrackets(lines: string[]): { beforeUs: number; afterUs: number }[];
}

const running = killChildrenAfterEach();

describe(`${PROCESSES} processes x ${WAITERS} waiters calling waitToConsume on one key, ${RULES.burst.limit} per ${RULES.burst.window} ms and ${RULES.sustained.limit} per s`, () => {
  let redis: TestRedis;
  beforeAll(async () => {
    assertBuilt();
    redis = await startRedis();
  });
  afterAll(() => redis.stop());

  it('admits every call, and no window of either rule holds more than its limit, counted from Redis TIME per admission', async () => {
    const prefix = uniquePrefix();
    const children = Array.from({ length: PROCESSES }, () => {
      const child = spawn(process.execPath, [WAITER, redis.url, prefix, JSON.stringify(RULES), String(WAITERS)], {
        stdio: ['pipe', 'pipe', 'inherit'],
        env: { ...process.env, NODE_OPTIONS: '' },
      });
      running.add(child);
      return child;
    });
    expect(await Promise.all(children.map(nextLine))).toEqual(children.map(() => 'ready'));
    const results = children.map(nextLine);
    for (const child of children) child.stdin!.write(JSON.stringify({ rounds: ROUNDS }) + '\n');
    const reports = (await Promise.all(results)).map((line) => JSON.parse(line) as { admitted: number; degraded: number });

    const { countPerWindow, parseBrackets } = (await import(WINDOWS)) as Windows;
    const brackets = parseBrackets(await redis.client().lrange(`${prefix}:admissions`, 0, -1));
    const burst = countPerWindow(brackets, RULES.burst.window, RULES.burst.limit);
    const sustained = countPerWindow(brackets, RULES.sustained.window, RULES.sustained.limit);
    const total = PROCESSES * WAITERS * ROUNDS;
    expect({
      admitted: reports.map((r) => r.admitted),
      degraded: reports.map((r) => r.degraded),
      witnessed: brackets.length,
      burstWithinLimit: burst.max <= RULES.burst.limit,
      sustainedWithinLimit: sustained.max <= RULES.sustained.limit,
    }).toEqual({
      admitted: children.map(() => WAITERS * ROUNDS),
      degraded: children.map(() => 0),
      witnessed: total,
      burstWithinLimit: true,
      sustainedWithinLimit: true,
    });
  }, 60_000);
});
