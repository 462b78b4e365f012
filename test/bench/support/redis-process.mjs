// A throwaway redis-server for the benchmarks: own port, no persistence, killed when the bench ends.
import { spawn, spawnSync } from 'node:child_process';
import { createServer } from 'node:net';

const MISSING = 'redis-server was not found on PATH (Debian/Ubuntu: apt-get install redis-server; macOS: brew install redis)';

/** `redis-server --version`, reduced to the version number (e.g. "7.0.15"). */
export function redisServerVersion() {
  const found = spawnSync('redis-server', ['--version'], { encoding: 'utf8' });
  if (found.error || found.status !== 0) throw new Error(MISSING);
  return /v=(\S+)/.exec(found.stdout)?.[1] ?? found.stdout.trim();
}

/** A port nothing listens on right now (the OS picks it). */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** Resolves true once the server logs that it is ready, false if it exits or stays silent for too long. */
export function waitForReady(child, timeoutMs) {
  return new Promise((resolve) => {
    let out = '';
    const done = (ready) => {
      clearTimeout(timer);
      child.stdout.removeListener('data', onData);
      child.removeListener('exit', onExit);
      resolve(ready);
    };
    const onData = (chunk) => {
      out += chunk.toString();
      if (out.includes('Ready to accept connections')) done(true);
    };
    const onExit = () => done(false);
    const timer = setTimeout(() => done(false), timeoutMs);
    child.stdout.on('data', onData);
    child.once('exit', onExit);
  });
}

const isRunning = (child) => child.exitCode === null && child.signalCode === null;

/**
 * Starts `redis-server --port <free> --save "" --appendonly no` bound to 127.0.0.1 and waits until it accepts
 * connections. Returns { port, stop(), killNow(), onUnexpectedExit(cb) }.
 */
export async function startRedisServer({ timeoutMs = 10_000 } = {}) {
  for (let attempt = 0; attempt < 4; attempt++) {
    const port = await freePort();
    const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.on('error', () => {}); // reported as a failed start below
    if (await waitForReady(child, timeoutMs)) return serverHandle(child, port);
    if (isRunning(child)) child.kill('SIGKILL');
    // Otherwise the port was most likely taken between our probe and the server's bind: try another.
  }
  throw new Error('redis-server did not start (4 attempts)');
}

function serverHandle(child, port) {
  // Keep draining its output: a full pipe would block the server on its next log line.
  child.stdout.resume();
  child.stderr.resume();
  let stopping = false;
  return {
    port,
    /** Called if the server dies while the bench still needs it. */
    onUnexpectedExit(callback) {
      child.once('exit', (code, signal) => {
        if (!stopping) callback(new Error(`redis-server on port ${port} exited unexpectedly (code ${code}, signal ${signal})`));
      });
    },
    /** Synchronous, for process 'exit' handlers. */
    killNow() {
      stopping = true;
      if (isRunning(child)) child.kill('SIGKILL');
    },
    /** SIGTERM, then SIGKILL if it has not exited within 3 s. */
    async stop() {
      stopping = true;
      if (!isRunning(child)) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
      await exited;
      clearTimeout(timer);
    },
  };
}
