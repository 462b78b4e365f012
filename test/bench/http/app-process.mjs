// Runs the bench app of one case in a child process of its own and reads how much CPU it used.
import { fork } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const SERVER = fileURLToPath(new URL('./server.mjs', import.meta.url));
const START_TIMEOUT_MS = 30_000;
const STOP_TIMEOUT_MS = 10_000;
const live = new Set();

// Whatever ends the bench, no app process outlives it.
process.once('exit', () => {
  for (const child of live) child.kill('SIGKILL');
});

/** User + system CPU seconds of a process from /proc (Linux), or NaN where /proc is not available. */
function procCpuSeconds(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which is in parentheses and may hold spaces): utime and stime are 14 and 15.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100; // USER_HZ is 100 on Linux
  } catch {
    return NaN;
  }
}

/**
 * Forks test/bench/http/server.mjs with the case's config and waits until it listens. `cpuProfile`
 * ({ dir, name }) runs it under --cpu-prof. Returns { port, pid, cpuSeconds(), resetStats(), stats(), stop() }.
 */
export async function startAppProcess(config, { cpuProfile } = {}) {
  const execArgv = cpuProfile ? ['--cpu-prof', `--cpu-prof-dir=${cpuProfile.dir}`, `--cpu-prof-name=${cpuProfile.name}`] : [];
  const child = fork(SERVER, [], {
    env: { ...process.env, BENCH_HTTP_CASE: JSON.stringify(config) },
    execArgv,
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  live.add(child);
  child.once('exit', () => live.delete(child));
  const port = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('bench app did not start within 30 s')), START_TIMEOUT_MS);
    child.once('message', (message) => {
      clearTimeout(timer);
      if (message?.type === 'listening') resolve(message.port);
      else reject(new Error(`unexpected message from bench app: ${JSON.stringify(message)}`));
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`bench app exited before listening (code ${code}, signal ${signal})`));
    });
  });
  /** Sends { type } and resolves to the app's reply of the same type. */
  const ask = (type) =>
    new Promise((resolve, reject) => {
      const onMessage = (message) => {
        if (message?.type !== type) return;
        child.off('message', onMessage);
        child.off('exit', onExit);
        resolve(message);
      };
      const onExit = () => reject(new Error(`bench app exited while asked for ${type}`));
      child.on('message', onMessage);
      child.once('exit', onExit);
      child.send({ type });
    });
  return {
    port,
    pid: child.pid,
    cpuSeconds: () => procCpuSeconds(child.pid),
    resetStats: () => ask('reset-stats'),
    stats: async () => (await ask('stats')).stats,
    /** The app's process.cpuUsage() (user and system CPU µs), read inside it. */
    cpuUsage: async () => (await ask('cpu')).usage,
    /** Asks the app to close (so a CPU profile is written), then SIGKILL if it has not exited in 10 s. */
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.send({ type: 'stop' });
      const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
      await exited;
      clearTimeout(timer);
    },
  };
}
