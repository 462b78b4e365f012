import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort } from './redis-server.js';

/** A private RabbitMQ node this test started on free loopback ports; never the machine's own (5672). */
export interface TestRabbitMq {
  /** `amqp://guest:guest@127.0.0.1:<port>`, for `amqplib.connect(url)` (guest is allowed from loopback). */
  url: string;
  /** The AMQP port. */
  port: number;
  /** The Erlang distribution port (what `rabbitmqctl` talks to). */
  distPort: number;
  /** The node's name, unique to this start: `rabbit-test-<pid>-<n>@localhost`. */
  node: string;
  /**
   * `rabbitmqctl stop`, then SIGKILL of whatever of the node's process group is left; waits until it has exited and
   * removes its temp dir. Safe to call twice.
   */
  stop(): Promise<void>;
}

/**
 * How long a suite should give `startRabbitMq()` in `beforeAll(fn, RABBITMQ_START_TIMEOUT_MS)`: a node boots in
 * seconds, but slower on a busy machine, and jest's default would fail the suite without a word about RabbitMQ.
 */
export const RABBITMQ_START_TIMEOUT_MS = 120_000;

export const RABBITMQ_SERVER_MISSING =
  'rabbitmq-server not found. The transport tests run against a real RabbitMQ, never a mock: install it ' +
  '(Debian/Ubuntu: apt-get install rabbitmq-server; macOS: brew install rabbitmq).';

/** Our own deadline for the node to accept AMQP, below RABBITMQ_START_TIMEOUT_MS so its error message is seen. */
const READY_WITHIN_MS = 100_000;

let started = 0;

/**
 * Starts a private RabbitMQ node (no plugins, so no management listener) with its data, logs and config in a temp
 * dir, and resolves once it answers the AMQP handshake. A boot takes seconds: start one per suite, in `beforeAll`
 * with RABBITMQ_START_TIMEOUT_MS, and `stop()` it in `afterAll`.
 */
export async function startRabbitMq(): Promise<TestRabbitMq> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await startNode();
    } catch (error) {
      // A port was taken between our probe and the node's bind (its console then says eaddrinuse): try others.
      if (attempt < 2 && String(error).includes('eaddrinuse')) continue;
      throw error;
    }
  }
}

async function startNode(): Promise<TestRabbitMq> {
  const server = rabbitTool('rabbitmq-server');
  const dir = mkdtempSync(join(tmpdir(), 'rabbitmq-test-'));
  const node = `rabbit-test-${process.pid}-${++started}@localhost`;
  let child: ChildProcess | undefined;
  try {
    const [port, distPort] = [await freePort(), await freePort()];
    const env = nodeEnv(dir, node, port, distPort);
    // The console goes to a file, not a pipe: nothing to drain, and its tail explains a failed start.
    const output = openSync(join(dir, 'console.log'), 'a');
    // Its own process group, so that stop() can reach the Erlang VM behind the start script, by the group's id.
    child = spawn(server, [], { env, cwd: dir, detached: true, stdio: ['ignore', output, output] });
    closeSync(output);
    await waitForAmqp(child, port, dir);
    const running = child;
    let stopping: Promise<void> | undefined;
    return {
      url: `amqp://guest:guest@127.0.0.1:${port}`,
      port,
      distPort,
      node,
      stop: () => (stopping ??= stopNode(running, node, env, dir)),
    };
  } catch (error) {
    if (child) await killGroup(child);
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
}

/**
 * The script to run: on Debian the one in /usr/lib/rabbitmq/bin, since the /usr/sbin wrapper switches to the
 * rabbitmq user when run as root (which would lose our environment and cookie); elsewhere the one on PATH.
 */
function rabbitTool(name: 'rabbitmq-server' | 'rabbitmqctl'): string {
  const debian = `/usr/lib/rabbitmq/bin/${name}`;
  if (existsSync(debian)) return debian;
  const onPath = (process.env.PATH ?? '').split(':').map((dir) => join(dir, name)).find((path) => existsSync(path));
  if (!onPath) throw new Error(RABBITMQ_SERVER_MISSING);
  return onPath;
}

/** The environment that makes the node private: every file in `dir`, every listener on loopback and our ports. */
function nodeEnv(dir: string, node: string, port: number, distPort: number): NodeJS.ProcessEnv {
  writeFileSync(join(dir, 'rabbitmq-env.conf'), ''); // instead of /etc/rabbitmq's, which names the system node
  writeFileSync(join(dir, 'enabled_plugins'), '[].\n'); // no management, prometheus or other listener
  writeFileSync(join(dir, 'rabbitmq.conf'), `listeners.tcp.default = 127.0.0.1:${port}\n`);
  return {
    ...process.env,
    HOME: cookieHome(dir),
    RABBITMQ_CONF_ENV_FILE: join(dir, 'rabbitmq-env.conf'),
    RABBITMQ_CONFIG_FILE: join(dir, 'rabbitmq.conf'),
    RABBITMQ_ADVANCED_CONFIG_FILE: join(dir, 'advanced.config'),
    RABBITMQ_ENABLED_PLUGINS_FILE: join(dir, 'enabled_plugins'),
    RABBITMQ_MNESIA_BASE: join(dir, 'mnesia'),
    RABBITMQ_LOG_BASE: join(dir, 'log'),
    RABBITMQ_NODENAME: node,
    RABBITMQ_NODE_IP_ADDRESS: '127.0.0.1',
    RABBITMQ_NODE_PORT: String(port),
    RABBITMQ_DIST_PORT: String(distPort),
    // The distribution port would listen on every interface otherwise.
    RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS: '-kernel inet_dist_use_interface {127,0,0,1}',
  };
}

/**
 * The node and rabbitmqctl must share an Erlang cookie, read from $HOME/.erlang.cookie: the user's when there is
 * one, else a fresh one in `dir` (then HOME is `dir`), so that nothing is written to the user's home.
 */
function cookieHome(dir: string): string {
  const home = homedir();
  if (existsSync(join(home, '.erlang.cookie'))) return home;
  writeFileSync(join(dir, '.erlang.cookie'), randomBytes(20).toString('hex').toUpperCase(), { mode: 0o400 });
  return dir;
}

/** Resolves once the node answers an AMQP protocol header with its Connection.Start; throws if it exits first. */
async function waitForAmqp(child: ChildProcess, port: number, dir: string): Promise<void> {
  const deadline = Date.now() + READY_WITHIN_MS;
  while (!(await answersAmqp(port))) {
    if (child.exitCode !== null || child.signalCode !== null || Date.now() > deadline) {
      const why = child.exitCode !== null || child.signalCode !== null ? 'exited' : `was not ready in ${READY_WITHIN_MS} ms`;
      throw new Error(`rabbitmq-server ${why} (AMQP port ${port}); its console ends with:\n${tail(join(dir, 'console.log'))}`);
    }
    await sleep(200);
  }
}

function answersAmqp(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(5_000, () => done(false));
    socket.once('error', () => done(false));
    socket.once('connect', () => socket.write(Buffer.from('AMQP\x00\x00\x09\x01', 'latin1')));
    // Frame type 1 (a method frame): the broker's Connection.Start.
    socket.once('data', (data: Buffer) => done(data[0] === 1));
    socket.once('end', () => done(false));
  });
}

async function stopNode(child: ChildProcess, node: string, env: NodeJS.ProcessEnv, dir: string): Promise<void> {
  if (child.exitCode === null && child.signalCode === null) {
    // A clean stop when it works; the kill below covers a node or a CLI that hangs.
    const exited = new Promise((resolve) => child.once('exit', resolve));
    const ctl = spawn(rabbitTool('rabbitmqctl'), ['-q', '-n', node, 'stop'], { env, cwd: dir, stdio: 'ignore' });
    const code = await Promise.race([new Promise((resolve) => ctl.once('exit', resolve)), unrefSleep(30_000)]);
    if (ctl.exitCode === null && ctl.signalCode === null) ctl.kill('SIGKILL');
    if (code === 0) await Promise.race([exited, unrefSleep(10_000)]);
  }
  await killGroup(child);
  rmSync(dir, { recursive: true, force: true });
}

/**
 * SIGKILL to the node's process group (the start script, the Erlang VM and its port programs), then waits until the
 * group has gone, so that its ports are free. The group's id is the child's pid: we end only what we started.
 */
async function killGroup(child: ChildProcess): Promise<void> {
  const exited = child.exitCode !== null || child.signalCode !== null ? undefined : new Promise((r) => child.once('exit', r));
  if (!signalGroup(child, 'SIGKILL')) return;
  await exited;
  // The VM may outlive the script by a moment; bounded, since a process whose parent never reaps it stays listed.
  for (let i = 0; i < 50 && signalGroup(child, 0); i++) await sleep(100);
}

/** Sends `signal` to the child's process group; false once the group no longer exists. */
function signalGroup(child: ChildProcess, signal: NodeJS.Signals | 0): boolean {
  try {
    process.kill(-child.pid!, signal);
    return true;
  } catch {
    return false;
  }
}

/** A wait that does not by itself keep jest's worker alive. */
function unrefSleep(ms: number): Promise<undefined> {
  return sleep(ms, undefined, { ref: false });
}

function tail(file: string): string {
  try {
    return readFileSync(file, 'utf8').split('\n').slice(-30).join('\n');
  } catch {
    return '(no console output)';
  }
}
