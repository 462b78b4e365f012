import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { RateLimitAlgorithm } from '../../lib/index.js';
import { killChildrenAfterEach } from '../support/child-processes.js';
import { startRedis, uniquePrefix, type TestRedis } from '../support/redis-server.js';

const HAMMER = fileURLToPath(new URL('./fixtures/hammer.mjs', import.meta.url));
const PROCESSES = 4;
const CALLS = 500;
const LIMIT = 1000;

/** The hammer processes started by the running test: killed after it, so a failed test leaves none waiting for "go". */
const running = killChildrenAfterEach();

/** Output lines of a child, as they come; fails once its output has ended ('close', not 'exit': every line read). */
function lines(child: ChildProcess): AsyncIterator<string> {
  const queue: string[] = [];
  let wake: (() => void) | undefined;
  let buffer = '';
  let closed = false;
  child.stdout!.on('data', (chunk: Buffer) => {
    buffer += chunk.toString();
    let i;
    while ((i = buffer.indexOf('\n')) >= 0) {
      queue.push(buffer.slice(0, i));
      buffer = buffer.slice(i + 1);
      wake?.();
    }
  });
  child.once('close', () => {
    closed = true;
    wake?.();
  });
  return {
    async next() {
      while (queue.length === 0) {
        if (closed) throw new Error(`hammer process ended (code ${child.exitCode}, signal ${child.signalCode}) without a line`);
        await new Promise<void>((resolve) => (wake = resolve));
      }
      return { value: queue.shift()!, done: false };
    },
  };
}

describe(`${PROCESSES} processes x ${CALLS} concurrent calls on one key, limit ${LIMIT}`, () => {
  let redis: TestRedis;
  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(() => redis.stop());

  it.each<RateLimitAlgorithm>(['sliding-log', 'sliding-window', 'fixed-window', 'token-bucket', 'gcra'])('%s admits exactly the limit', async (algorithm) => {
    const prefix = uniquePrefix();
    const now = String(1_700_000_000_000 + 5 * 60_000);
    const children = Array.from({ length: PROCESSES }, () =>
      spawn(process.execPath, [HAMMER, redis.url, prefix, algorithm, String(CALLS), String(LIMIT), now], { stdio: ['pipe', 'pipe', 'inherit'] }),
    );
    for (const child of children) running.add(child);
    // Each child closes its client and exits after its answer: the server must outlive them (afterAll stops it).
    const exits = children.map((child) => new Promise((resolve) => child.once('exit', resolve)));
    const outputs = children.map(lines);
    for (const out of outputs) expect((await out.next()).value).toBe('ready');
    for (const child of children) child.stdin!.write('go\n');
    const admitted = await Promise.all(outputs.map(async (out) => JSON.parse((await out.next()).value).admitted as number));
    await Promise.all(exits);
    expect(admitted.reduce((a, b) => a + b, 0)).toBe(LIMIT);
    // The processes really overlapped: more than one got a share (on a loaded machine one may start last and get none).
    expect(admitted.filter((n) => n > 0).length).toBeGreaterThan(1);
  });
});
