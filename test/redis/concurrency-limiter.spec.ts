import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { killChildrenAfterEach, nextLine } from '../support/child-processes.js';
import { startRedis, uniquePrefix, type TestRedis } from '../support/redis-server.js';

const LEASER = fileURLToPath(new URL('./fixtures/leaser.mjs', import.meta.url));
const PROCESSES = 4;
const WORKERS = 8;
const ROUNDS = 60;
const LIMIT = 3;

/** The leaser processes started by the running test: killed after it, so a failed test leaves none waiting for "go". */
const running = killChildrenAfterEach();

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
