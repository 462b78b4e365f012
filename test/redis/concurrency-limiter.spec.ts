import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { killChildrenAfterEach } from '../support/child-processes.js';
import { startRedis, uniquePrefix, type TestRedis } from '../support/redis-server.js';

const LEASER = fileURLToPath(new URL('./fixtures/leaser.mjs', import.meta.url));
const PROCESSES = 4;
const WORKERS = 8;
const ROUNDS = 60;
const LIMIT = 3;

/** The leaser processes started by the running test: killed after it, so a failed test leaves none waiting for "go". */
const running = killChildrenAfterEach();

/** The child's next line of output; fails once its output has ended without one ('close': every line read). */
function nextLine(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let buffer = '';
    const onData = (chunk: Buffer) => {
      buffer += chunk.toString();
      const i = buffer.indexOf('\n');
      if (i < 0) return;
      child.stdout!.off('data', onData);
      child.off('close', onClose);
      resolve(buffer.slice(0, i));
    };
    // Not 'exit': it can come before the last output is read.
    const onClose = (code: number | null, signal: string | null) => reject(new Error(`leaser process ended (code ${code}, signal ${signal}) without a line`));
    child.stdout!.on('data', onData);
    child.once('close', onClose);
  });
}

describe(`${PROCESSES} processes x ${WORKERS} workers taking leases of one key, limit ${LIMIT}`, () => {
  let redis: TestRedis;
  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(() => redis.stop());

  it(`never hold more than ${LIMIT} leases at once, and every lease is released`, async () => {
    const prefix = uniquePrefix();
    const children = Array.from({ length: PROCESSES }, () =>
      spawn(process.execPath, [LEASER, redis.url, prefix, String(LIMIT), String(WORKERS), String(ROUNDS)], { stdio: ['pipe', 'pipe', 'inherit'] }),
    );
    for (const child of children) running.add(child);
    const exits = children.map((child) => new Promise((resolve) => child.once('exit', resolve)));
    for (const child of children) expect(await nextLine(child)).toBe('ready');
    const results = children.map(nextLine);
    for (const child of children) child.stdin!.write('go\n');
    const seen = (await Promise.all(results)).map((line) => JSON.parse(line) as { acquired: number; refused: number; highest: number });
    await Promise.all(exits);
    expect(Math.max(...seen.map((s) => s.highest))).toBeLessThanOrEqual(LIMIT);
    // The limit was contended: some attempts were refused, and more than one process got leases.
    expect(seen.reduce((n, s) => n + s.refused, 0)).toBeGreaterThan(0);
    expect(seen.filter((s) => s.acquired > 0).length).toBeGreaterThan(1);
    const client = redis.client();
    expect(await client.exists(`${prefix}:exports:cc:{one-key}`)).toBe(0);
    client.disconnect();
  });
});
