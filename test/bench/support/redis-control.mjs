// A throwaway redis-server that a bench can fault on purpose: stall it (SIGSTOP, the connection stays open and
// nothing answers), resume it (SIGCONT), or kill it (SIGKILL: connections refused). Every server started here
// is resumed and killed when the process ends, however it ends (normal exit, error, Ctrl-C), so a failed bench
// never leaves a stopped redis-server behind.
import { spawn } from 'node:child_process';
import { freePort, waitForReady } from './redis-process.mjs';

const live = new Set();
let guarded = false;

const isRunning = (child) => child.exitCode === null && child.signalCode === null;

function killNow(child) {
  if (!isRunning(child)) return;
  // A stopped process would take the SIGKILL anyway; SIGCONT first so nothing is left half-suspended if it is not.
  try {
    child.kill('SIGCONT');
  } catch {}
  child.kill('SIGKILL');
}

function guardProcess() {
  if (guarded) return;
  guarded = true;
  process.once('exit', () => {
    for (const child of live) killNow(child);
  });
  for (const signal of ['SIGINT', 'SIGTERM']) {
    process.once(signal, () => {
      process.stderr.write(`\n${signal}: stopping\n`);
      for (const child of live) killNow(child);
      process.exit(130);
    });
  }
}


/**
 * Starts `redis-server --port <free> --bind 127.0.0.1 --save "" --appendonly no` and waits until it accepts
 * connections. Returns { port, pid, stall(), resume(), kill(), stop(), stalled, running }.
 */
export async function startFaultableRedis({ timeoutMs = 10_000 } = {}) {
  guardProcess();
  for (let attempt = 0; attempt < 4; attempt++) {
    const port = await freePort();
    const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.on('error', () => {}); // reported as a failed start below
    live.add(child);
    child.once('exit', () => live.delete(child));
    if (await waitForReady(child, timeoutMs)) return handle(child, port);
    killNow(child);
  }
  throw new Error('redis-server did not start (4 attempts)');
}

function handle(child, port) {
  child.stdout.resume();
  child.stderr.resume();
  let stalled = false;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  return {
    port,
    pid: child.pid,
    get stalled() {
      return stalled;
    },
    get running() {
      return isRunning(child);
    },
    /** SIGSTOP: the server keeps its sockets open and answers nothing, so every command waits for its timeout. */
    stall() {
      child.kill('SIGSTOP');
      stalled = true;
    },
    /** SIGCONT: the server runs again and works through whatever queued up meanwhile. */
    resume() {
      if (!stalled || !isRunning(child)) return;
      child.kill('SIGCONT');
      stalled = false;
    },
    /** SIGKILL, resolved once the process is gone: new connections are refused from then on. */
    async kill() {
      if (isRunning(child)) killNow(child);
      stalled = false;
      await exited;
    },
    /** Same as kill(): the server is throwaway, nothing to flush. */
    stop() {
      return this.kill();
    },
  };
}
