import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { freePort, redisServerBinary, startRedis, type TestRedis } from '../support/redis-server.js';

export const SENTINEL_UNAVAILABLE =
  'This redis-server cannot run as a Sentinel (`redis-server <sentinel.conf> --sentinel`). The Sentinel tests need ' +
  'Redis >= 2.8 with Sentinel built in (it is in every standard build, and `redis-sentinel` is the same binary).';

export const MASTER_NAME = 'mymaster';
const READY_TIMEOUT_MS = 10_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A master and its replica, monitored by the Sentinel under `name`. */
export interface SentinelGroup {
  name: string;
  master: TestRedis;
  replica: TestRedis;
  /** The master's address as the Sentinel gives it now. */
  masterAddress(): Promise<{ host: string; port: number }>;
}

/** Masters, each with its replica, and one Sentinel (quorum 1) monitoring them all, all processes this test owns. */
export interface SentinelSetup {
  /** The group of `name` (one of those the setup was started with). */
  group(name: string): SentinelGroup;
  sentinel: { host: string; port: number; process: ChildProcess };
  /** A client on the Sentinel itself (SENTINEL commands); closed by `stop()`. */
  sentinelClient: Redis;
  /** Kills every process (masters, replicas, Sentinel) that still runs and removes the Sentinel's directory. */
  stop(): Promise<void>;
}

async function kill(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGCONT');
  child.kill('SIGKILL');
  await exited;
}

/** Polls `check` every 50 ms until it returns a value, or throws `what` after `timeoutMs`. */
export async function waitFor<T>(what: string, timeoutMs: number, check: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) throw new Error(`Timed out after ${timeoutMs} ms waiting for ${what}${last ? ` (last error: ${(last as Error).message})` : ''}`);
    await sleep(50);
  }
}

/** Starts `redis-server <conf> --sentinel`; `failed` (its output) when it stopped before monitoring the master. */
function spawnSentinel(binary: string, confPath: string): Promise<{ child: ChildProcess; output: () => string } | { failed: string }> {
  const child = spawn(binary, [confPath, '--sentinel'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    if (out.length < 65_536) out += chunk.toString();
  });
  child.stderr!.on('data', (chunk: Buffer) => {
    if (out.length < 65_536) out += chunk.toString();
  });
  return new Promise((resolve) => {
    const timer = setTimeout(() => done(false), READY_TIMEOUT_MS);
    const onData = () => {
      if (out.includes('+monitor master')) done(true);
    };
    const done = (ok: boolean) => {
      clearTimeout(timer);
      child.stdout!.off('data', onData);
      if (ok) resolve({ child, output: () => out });
      else void kill(child).then(() => resolve({ failed: out }));
    };
    child.stdout!.on('data', onData);
    child.once('exit', () => done(false));
  });
}

/** A master and its replica (`--replicaof`) on free ports, the replica in sync; each is pushed to `started`. */
async function startGroup(dir: string, started: { stop(): Promise<void> }[]): Promise<{ master: TestRedis; replica: TestRedis }> {
  // The replica writes the RDB of its full sync to its working directory: the temp one, not the repository. The
  // master sends it at once, not after the 5 s Redis waits by default for more replicas to share a diskless sync.
  const master = await startRedis({ own: true, args: ['--dir', dir, '--repl-diskless-sync-delay', '0'] });
  started.push(master);
  const replica = await startRedis({ own: true, args: ['--dir', dir, '--replicaof', '127.0.0.1', String(master.port)] });
  started.push(replica);
  const replicaClient = replica.client();
  await waitFor('the replica to sync with the master', READY_TIMEOUT_MS, async () => (/master_link_status:up/.test(await replicaClient.info('replication')) ? true : undefined));
  return { master, replica };
}

/**
 * For each of `names`, a master and its replica (`--replicaof`) on free ports, the replica in sync, started side by
 * side; then one Sentinel (quorum 1, master down after 1 s, failover timeout 3 s) monitoring them all, that already
 * knows each replica. Each group fails over on its own, so that each suite of a file can kill its master while
 * sharing one start-up. Fails with a clear message when this redis-server has no Sentinel mode.
 */
export async function startSentinelSetup(names: readonly string[] = [MASTER_NAME]): Promise<SentinelSetup> {
  const binary = redisServerBinary();
  const started: { stop(): Promise<void> }[] = [];
  const dir = mkdtempSync(join(tmpdir(), 'rl-sentinel-'));
  let sentinelProcess: ChildProcess | undefined;
  let sentinelClient: Redis | undefined;
  const stop = async () => {
    await sentinelClient?.quit().catch(() => sentinelClient?.disconnect());
    if (sentinelProcess) await kill(sentinelProcess);
    await Promise.all(started.map((s) => s.stop()));
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const pairs = await Promise.all(names.map(() => startGroup(dir, started)));

    let sentinel: { child: ChildProcess; output: () => string } | null = null;
    let lastOutput = '';
    let port = 0;
    for (let attempt = 0; attempt < 3 && !sentinel; attempt++) {
      port = await freePort();
      const confPath = join(dir, `sentinel-${port}.conf`);
      // The Sentinel rewrites this file (its id, the replicas it found, failovers), so it lives in a temp dir.
      writeFileSync(
        confPath,
        [
          `port ${port}`,
          'bind 127.0.0.1',
          `dir ${dir}`,
          ...names.flatMap((name, i) => [
            `sentinel monitor ${name} 127.0.0.1 ${pairs[i].master.port} 1`,
            `sentinel down-after-milliseconds ${name} 1000`,
            `sentinel failover-timeout ${name} 3000`,
            `sentinel parallel-syncs ${name} 1`,
          ]),
          '',
        ].join('\n'),
      );
      const spawned = await spawnSentinel(binary, confPath);
      if ('output' in spawned) sentinel = spawned;
      else lastOutput = spawned.failed;
    }
    if (!sentinel) throw new Error(`${SENTINEL_UNAVAILABLE}\nIts output:\n${lastOutput.slice(-2000)}`);
    sentinelProcess = sentinel.child;
    sentinelClient = new Redis({ host: '127.0.0.1', port, maxRetriesPerRequest: 1 });
    const client = sentinelClient;
    const groups = new Map<string, SentinelGroup>();
    for (const [i, name] of names.entries()) {
      const { master, replica } = pairs[i];
      // The Sentinel learns of the replica from the master's INFO; a failover needs it.
      await waitFor(`the Sentinel to list the replica of ${name}`, READY_TIMEOUT_MS, async () => {
        const replicas = (await client.call('SENTINEL', 'REPLICAS', name)) as string[][];
        return replicas.some((fields) => fields.includes(String(replica.port))) ? true : undefined;
      });
      const masterAddress = async () => {
        const [host, p] = (await client.call('SENTINEL', 'GET-MASTER-ADDR-BY-NAME', name)) as [string, string];
        return { host, port: Number(p) };
      };
      groups.set(name, { name, master, replica, masterAddress });
    }
    const group = (name: string) => {
      const found = groups.get(name);
      if (!found) throw new Error(`No Sentinel group ${name} (started: ${names.join(', ')})`);
      return found;
    };
    return { group, sentinel: { host: '127.0.0.1', port, process: sentinel.child }, sentinelClient: client, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
