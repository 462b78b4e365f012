import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Cluster, Redis, type ClusterOptions } from 'ioredis';
import { freePort, redisServerBinary } from './redis-server.js';

/** A Redis Cluster this test started (or the one REDIS_CLUSTER_NODES names, which is never stopped or signalled). */
export interface TestRedisCluster {
  ports: number[];
  nodes: { host: string; port: number }[];
  /** A new ioredis Cluster client on this cluster; closed by `stop()`. */
  cluster(options?: ClusterOptions): Cluster;
  /** The redis-server processes, when the test owns them (empty for REDIS_CLUSTER_NODES). */
  processes: ChildProcess[];
  stop(): Promise<void>;
}

export const REDIS_CLI_MISSING =
  'redis-cli was not found on PATH. The cluster tests create a real Redis Cluster with `redis-cli --cluster create`: ' +
  'install it (it ships with redis-server) or set REDIS_CLUSTER_NODES=host:port,host:port,... to use an existing cluster.';

const READY_TIMEOUT_MS = 15_000;
/** The cluster bus listens on port + 10000, which must exist and be free too. */
const BUS_OFFSET = 10_000;

function redisCliBinary(): string {
  const found = spawnSync('redis-cli', ['--version'], { encoding: 'utf8' });
  if (found.error || found.status !== 0) throw new Error(REDIS_CLI_MISSING);
  return 'redis-cli';
}

function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.unref();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** A free port whose cluster bus port (port + 10000) is a valid port and free as well. */
async function freeClusterPort(taken: ReadonlySet<number>): Promise<number> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const port = await freePort();
    if (port + BUS_OFFSET > 65_535 || taken.has(port) || taken.has(port + BUS_OFFSET)) continue;
    if (await portIsFree(port + BUS_OFFSET)) return port;
  }
  throw new Error('Could not find a free port pair (port and port + 10000) for a Redis Cluster node');
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function kill(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGCONT');
  child.kill('SIGKILL');
  await exited;
}

/** Starts one cluster-enabled redis-server; resolves with null when it exited before being ready (port taken). */
async function startNode(binary: string, port: number, dir: string): Promise<ChildProcess | null> {
  const args = [
    '--port', String(port),
    '--cluster-enabled', 'yes',
    '--cluster-config-file', join(dir, `nodes-${port}.conf`),
    '--cluster-node-timeout', '2000',
    '--save', '',
    '--appendonly', 'no',
    '--bind', '127.0.0.1',
    '--dir', dir,
  ];
  const child = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  // Keep draining both pipes for the process's whole life, or redis-server blocks once a pipe is full.
  child.stderr!.resume();
  const ready = await new Promise<boolean>((resolve) => {
    let out = '';
    const timer = setTimeout(() => resolve(false), READY_TIMEOUT_MS);
    child.stdout!.on('data', (chunk: Buffer) => {
      if (out.length < 65_536) out += chunk.toString();
      if (out.includes('Ready to accept connections')) {
        clearTimeout(timer);
        resolve(true);
      }
    });
    child.once('exit', () => {
      clearTimeout(timer);
      resolve(false);
    });
  });
  if (!ready) {
    await kill(child);
    return null;
  }
  return child;
}

function run(binary: string, args: string[], timeoutMs: number): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const collect = (chunk: Buffer) => {
      output += chunk.toString();
    };
    child.stdout!.on('data', collect);
    child.stderr!.on('data', collect);
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

/** Polls CLUSTER INFO on every node until each reports cluster_state:ok (bounded). */
async function waitForClusterOk(nodes: { host: string; port: number }[]): Promise<void> {
  const clients = nodes.map(
    (n) => new Redis({ host: n.host, port: n.port, lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => 100, enableOfflineQueue: true }),
  );
  const deadline = Date.now() + READY_TIMEOUT_MS;
  const states = new Map<number, string>();
  try {
    for (;;) {
      const ok = await Promise.all(
        clients.map(async (client, i) => {
          try {
            const info = String(await client.call('CLUSTER', 'INFO'));
            const state = /cluster_state:(\w+)/.exec(info)?.[1] ?? 'unknown';
            states.set(nodes[i].port, state);
            return state === 'ok';
          } catch (error) {
            states.set(nodes[i].port, `error: ${(error as Error).message}`);
            return false;
          }
        }),
      );
      if (ok.every(Boolean)) return;
      if (Date.now() > deadline) {
        const detail = [...states].map(([port, state]) => `127.0.0.1:${port} cluster_state=${state}`).join(', ');
        throw new Error(`Redis Cluster did not reach cluster_state:ok within ${READY_TIMEOUT_MS / 1000} s (${detail})`);
      }
      await sleep(100);
    }
  } finally {
    await Promise.all(clients.map((c) => c.quit().catch(() => c.disconnect())));
  }
}

function parseNodes(spec: string): { host: string; port: number }[] {
  return spec
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((s) => {
      const at = s.lastIndexOf(':');
      const port = Number(s.slice(at + 1));
      if (at <= 0 || !Number.isInteger(port) || port <= 0) throw new Error(`Invalid REDIS_CLUSTER_NODES entry ${JSON.stringify(s)} (expected host:port)`);
      return { host: s.slice(0, at), port };
    });
}

/**
 * Starts a throwaway Redis Cluster of `masters` (default 3) cluster-enabled redis-servers, no replicas, no
 * persistence, each on a free port, joined with `redis-cli --cluster create`, and waits until every node reports
 * `cluster_state:ok`. When REDIS_CLUSTER_NODES is set (host:port,...), uses that cluster instead and never stops it.
 */
export async function startRedisCluster(options: { masters?: number } = {}): Promise<TestRedisCluster> {
  const clients: Cluster[] = [];
  const clusterClient =
    (nodes: { host: string; port: number }[]) =>
    (o: ClusterOptions = {}): Cluster => {
      const c = new Cluster(nodes, { redisOptions: {}, enableAutoPipelining: false, ...o });
      clients.push(c);
      return c;
    };
  const closeClients = async () => {
    await Promise.all(clients.splice(0).map((c) => c.quit().catch(() => c.disconnect())));
  };

  if (process.env.REDIS_CLUSTER_NODES) {
    const nodes = parseNodes(process.env.REDIS_CLUSTER_NODES);
    if (nodes.length === 0) throw new Error('REDIS_CLUSTER_NODES is set but names no node (expected host:port,host:port,...)');
    return { ports: nodes.map((n) => n.port), nodes, cluster: clusterClient(nodes), processes: [], stop: closeClients };
  }

  const masters = options.masters ?? 3;
  if (!Number.isInteger(masters) || masters < 3) throw new RangeError(`A Redis Cluster needs at least 3 masters (got ${masters})`);
  const serverBinary = redisServerBinary();
  const cliBinary = redisCliBinary();
  const dir = mkdtempSync(join(tmpdir(), 'rl-cluster-'));
  const processes: ChildProcess[] = [];
  const ports: number[] = [];
  const cleanup = async () => {
    await Promise.all(processes.map(kill));
    rmSync(dir, { recursive: true, force: true });
  };

  try {
    const taken = new Set<number>();
    while (ports.length < masters) {
      let child: ChildProcess | null = null;
      let port = 0;
      for (let attempt = 0; attempt < 5 && !child; attempt++) {
        port = await freeClusterPort(taken);
        child = await startNode(serverBinary, port, dir); // null: the port (or its bus port) was taken since the probe
      }
      if (!child) throw new Error(`redis-server (cluster mode) did not start on port ${port}`);
      processes.push(child);
      ports.push(port);
      taken.add(port).add(port + BUS_OFFSET);
    }
    const nodes = ports.map((port) => ({ host: '127.0.0.1', port }));

    const created = await run(cliBinary, ['--cluster', 'create', ...ports.map((p) => `127.0.0.1:${p}`), '--cluster-replicas', '0', '--cluster-yes'], READY_TIMEOUT_MS);
    if (created.code !== 0) {
      throw new Error(`redis-cli --cluster create failed (exit code ${created.code}):\n${created.output.slice(-4000)}`);
    }
    await waitForClusterOk(nodes);

    return {
      ports,
      nodes,
      cluster: clusterClient(nodes),
      processes,
      stop: async () => {
        await closeClients();
        await cleanup();
      },
    };
  } catch (error) {
    await cleanup();
    throw error;
  }
}

/** Resolves once a Cluster client is ready (it has connected and fetched the slot table). */
export function clusterReady(cluster: Cluster, timeoutMs = READY_TIMEOUT_MS): Promise<void> {
  if (cluster.status === 'ready') return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      cluster.off('ready', onReady);
      reject(new Error(`Cluster client not ready within ${timeoutMs} ms (status ${cluster.status})`));
    }, timeoutMs);
    const onReady = () => {
      clearTimeout(timer);
      resolve();
    };
    cluster.once('ready', onReady);
  });
}
