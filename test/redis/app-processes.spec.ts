/**
 * Several app processes on one Redis: 5 Node processes, each a Nest Express app built on the BUILT package
 * (test/redis/fixtures/app.mjs; `npm test` builds before jest runs), with the same rule and key, each deciding
 * through a client of its own library: the one the module makes from the URL (ioredis), and a node-redis 5,
 * node-redis 6, iovalkey and GLIDE client passed as `store`. Requests fired at once across the apps are admitted
 * exactly `limit` times in all: every adapter's call is one atomic script call on the one count, counted once.
 * One process per library, all at once, rather than a run of several processes per library: an app process takes
 * seconds to start on a loaded machine.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { assertBuilt } from '../compat/sandbox.js';
import { CLIENT_LIBRARIES } from '../support/redis-clients.js';
import { startRedis, uniquePrefix, type TestRedis } from '../support/redis-server.js';

const APP = fileURLToPath(new URL('./fixtures/app.mjs', import.meta.url));
/** The client library of each app process. */
const LIBRARIES = ['ioredis', ...CLIENT_LIBRARIES];
const PROCESSES = LIBRARIES.length;
const LIMIT = 50;
const REQUESTS = 300;
const START_TIMEOUT_MS = 20_000;

interface AppProcess {
  child: ChildProcess;
  port: number;
  stderr: () => string;
}

/** Starts one app process deciding through a client of `library`; resolves with its port once it printed it. */
function startAppProcess(url: string, prefix: string, now: number, library: string): Promise<AppProcess> {
  const child = spawn(process.execPath, [APP, url, prefix, String(LIMIT), String(now), library], {
    stdio: ['pipe', 'pipe', 'pipe'],
    // Not the jest worker's NODE_OPTIONS: a plain node, as an app runs.
    env: { ...process.env, NODE_OPTIONS: '' },
  });
  let stdout = '';
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => {
    if (stderr.length < 65_536) stderr += chunk.toString();
  });
  return new Promise((resolve, reject) => {
    const fail = (why: string) => {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(new Error(`App process ${why}\n--- stdout ---\n${stdout}\n--- stderr ---\n${stderr}`));
    };
    const timer = setTimeout(() => fail(`printed no port within ${START_TIMEOUT_MS} ms`), START_TIMEOUT_MS);
    child.stdout!.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      const line = stdout.split('\n').find((l) => l.startsWith('{"port"'));
      if (line) {
        clearTimeout(timer);
        resolve({ child, port: JSON.parse(line).port as number, stderr: () => stderr });
      }
    });
    child.once('exit', (code, signal) => fail(`exited early (code ${code}, signal ${signal})`));
  });
}

/** Ends an app process: closes its stdin (it closes the app and exits), SIGKILL if it has not exited in 5 s. */
async function stopAppProcess({ child }: AppProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.stdin!.end();
  const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
  await exited;
  clearTimeout(timer);
}

/** One POST /orders to the app on `port`: its status and the pid of the process that answered. */
async function order(port: number): Promise<{ port: number; status: number; pid?: number }> {
  const response = await fetch(`http://127.0.0.1:${port}/orders`, { method: 'POST', headers: { 'x-tenant': 'acme' } });
  const body = (await response.json()) as { pid?: number };
  return { port, status: response.status, pid: body.pid };
}

describe(`${PROCESSES} app processes on one Redis, one rule and key, each deciding through another client library`, () => {
  let redis: TestRedis;
  const apps: AppProcess[] = [];

  beforeAll(async () => {
    assertBuilt();
    redis = await startRedis();
  });
  afterAll(async () => {
    await Promise.all(apps.splice(0).map(stopAppProcess));
    await redis?.stop();
  });

  it(`admits exactly ${LIMIT} of ${REQUESTS} requests across the ${PROCESSES} apps, all but one per app fired at once, and refuses the rest with 429`, async () => {
    const prefix = uniquePrefix();
    const now = 1_700_000_000_000 + 7 * 60_000;
    apps.push(...(await Promise.all(LIBRARIES.map((library) => startAppProcess(redis.url, prefix, now, library)))));
    const ports = apps.map((a) => a.port);
    expect(new Set(ports).size).toBe(PROCESSES);

    // One request to each app in turn, each admitted on the shared count: which process wins the requests fired at
    // once depends on the machine's scheduling (on a busy one, a single process can take them all).
    const first = [];
    for (const port of ports) first.push(await order(port));
    const statuses = [...first, ...(await Promise.all(Array.from({ length: REQUESTS - PROCESSES }, (_, i) => order(ports[i % PROCESSES]))))];

    const count = (status: number) => statuses.filter((s) => s.status === status).length;
    const degraded = await Promise.all(ports.map(async (port) => ((await (await fetch(`http://127.0.0.1:${port}/orders/stats`)).json()) as { degraded: number }).degraded));
    expect({ admitted: count(200), refused: count(429), degraded }).toEqual({ admitted: LIMIT, refused: REQUESTS - LIMIT, degraded: LIBRARIES.map(() => 0) });
    // Each app answered its share, and each process admitted on the one count.
    for (const port of ports) expect(statuses.filter((s) => s.port === port)).toHaveLength(REQUESTS / PROCESSES);
    expect({ statuses: first.map((s) => s.status), processes: new Set(first.map((s) => s.pid)).size }).toEqual({ statuses: LIBRARIES.map(() => 200), processes: PROCESSES });
  });
});
