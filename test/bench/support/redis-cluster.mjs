// A throwaway Redis Cluster for the store bench: 3 cluster-enabled redis-servers on free ports (and free bus
// ports, port + 10000), no replicas, no persistence, joined with `redis-cli --cluster create`, killed when the
// bench ends however it ends. The same steps as test/support/redis-cluster.ts, in plain ESM.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { freePort, waitForReady } from './redis-process.mjs';

const BUS_OFFSET = 10_000;
const READY_TIMEOUT_MS = 15_000;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function freeClusterPort(taken) {
  for (let attempt = 0; attempt < 200; attempt++) {
    const port = await freePort();
    if (port + BUS_OFFSET > 65_535 || taken.has(port) || taken.has(port + BUS_OFFSET)) continue;
    return port;
  }
  throw new Error('no free port pair (port and port + 10000) for a cluster node');
}

function startNode(port, dir) {
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--cluster-enabled', 'yes', '--cluster-config-file', join(dir, `nodes-${port}.conf`), '--cluster-node-timeout', '2000', '--save', '', '--appendonly', 'no', '--bind', '127.0.0.1', '--dir', dir],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  child.on('error', () => {});
  return child;
}

async function waitForClusterOk(ports) {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  const clients = ports.map((port) => new Redis({ host: '127.0.0.1', port, maxRetriesPerRequest: 0 }));
  try {
    for (;;) {
      const states = await Promise.all(clients.map((c) => c.call('CLUSTER', 'INFO').then((info) => /cluster_state:ok/.test(String(info)), () => false)));
      if (states.every(Boolean)) return;
      if (Date.now() > deadline) throw new Error('Redis Cluster did not reach cluster_state:ok in 15 s');
      await sleep(100);
    }
  } finally {
    await Promise.all(clients.map((c) => c.quit().catch(() => c.disconnect())));
  }
}

/** Starts the cluster. Returns { ports, nodes, admins (one client per node), pids, stop() }. */
export async function startBenchCluster({ masters = 3 } = {}) {
  const cli = spawnSync('redis-cli', ['--version'], { encoding: 'utf8' });
  if (cli.error || cli.status !== 0) throw new Error('redis-cli was not found on PATH (it ships with redis-server)');
  const dir = mkdtempSync(join(tmpdir(), 'rl-bench-cluster-'));
  const children = [];
  const ports = [];
  const killAll = () => {
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  };
  process.once('exit', killAll);
  try {
    const taken = new Set();
    while (ports.length < masters) {
      const port = await freeClusterPort(taken);
      const child = startNode(port, dir);
      if (!(await waitForReady(child, READY_TIMEOUT_MS))) {
        child.kill('SIGKILL');
        continue;
      }
      child.stdout.resume();
      child.stderr.resume();
      children.push(child);
      ports.push(port);
      taken.add(port).add(port + BUS_OFFSET);
    }
    const created = spawnSync('redis-cli', ['--cluster', 'create', ...ports.map((p) => `127.0.0.1:${p}`), '--cluster-replicas', '0', '--cluster-yes'], {
      encoding: 'utf8',
      timeout: READY_TIMEOUT_MS,
    });
    if (created.status !== 0) throw new Error(`redis-cli --cluster create failed: ${(created.stdout + created.stderr).slice(-2000)}`);
    await waitForClusterOk(ports);
  } catch (error) {
    killAll();
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  const admins = ports.map((port) => new Redis({ host: '127.0.0.1', port }));
  return {
    ports,
    nodes: ports.map((port) => ({ host: '127.0.0.1', port })),
    admins,
    pids: children.map((c) => c.pid),
    /** FLUSHALL on every master (a cluster's FLUSHALL is per node). */
    flush: () => Promise.all(admins.map((a) => a.flushall())),
    async stop() {
      await Promise.all(admins.map((a) => a.quit().catch(() => a.disconnect())));
      killAll();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
