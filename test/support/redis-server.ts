import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { Redis, type RedisOptions } from 'ioredis';

/** A redis-server this test started (or the one REDIS_URL names, which is never stopped or signalled). */
export interface TestRedis {
  url: string;
  port: number;
  /** The process, when the test owns it: tests that break Redis (SIGKILL, SIGSTOP) need their own. */
  process?: ChildProcess;
  /** A new client on this server; closed by `stop()`. */
  client(options?: RedisOptions): Redis;
  stop(): Promise<void>;
  /**
   * Only for a server the test owns: kills it if it still runs, then starts a new, empty one on the same port
   * (a restart: clients reconnect to the same address). `process` names the new one afterwards.
   */
  restart?(): Promise<void>;
}

export const REDIS_SERVER_MISSING =
  'redis-server was not found on PATH. The tests run against a real Redis, never a mock: install it ' +
  '(Debian/Ubuntu: apt-get install redis-server; macOS: brew install redis) or set REDIS_URL=redis://host:port.';

export function redisServerBinary(): string {
  const found = spawnSync('redis-server', ['--version'], { encoding: 'utf8' });
  if (found.error || found.status !== 0) throw new Error(REDIS_SERVER_MISSING);
  return 'redis-server';
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/**
 * Starts a throwaway redis-server on a free port (no persistence), or, when REDIS_URL is set and `own` is not
 * asked for, uses that server. Tests keep to their own random key prefixes, so a shared server is fine.
 */
export async function startRedis(options: { own?: boolean; args?: string[] } = {}): Promise<TestRedis> {
  const clients: Redis[] = [];
  const client = (url: string) => (o: RedisOptions = {}) => {
    const c = new Redis(url, { lazyConnect: false, ...o });
    clients.push(c);
    return c;
  };
  const closeClients = async () => {
    // A client the test already disconnected is left alone: QUIT on it kept the test's process from exiting (jest's
    // "did not exit one second after the test run", or "a worker process has failed to exit" in a full run).
    await Promise.all(clients.map((c) => (c.status === 'end' ? undefined : c.quit().catch(() => c.disconnect()))));
  };
  if (process.env.REDIS_URL && !options.own) {
    const url = process.env.REDIS_URL;
    return { url, port: Number(new URL(url).port || 6379), client: client(url), stop: closeClients };
  }
  const binary = redisServerBinary();
  const args = options.args ?? [];
  for (let attempt = 0; ; attempt++) {
    const port = await freePort();
    let child = await spawnServer(binary, port, args);
    if (!child) {
      if (attempt < 3) continue; // the port was taken between our probe and the server's bind
      throw new Error(`redis-server did not start on port ${port}`);
    }
    const url = `redis://127.0.0.1:${port}`;
    const kill = async () => {
      const current = child!;
      if (current.exitCode === null && current.signalCode === null) {
        const exited = new Promise((resolve) => current.once('exit', resolve));
        current.kill('SIGCONT');
        current.kill('SIGKILL');
        await exited;
      }
    };
    return {
      url,
      port,
      get process() {
        return child!;
      },
      client: client(url),
      stop: async () => {
        await closeClients();
        await kill();
      },
      restart: async () => {
        await kill();
        const next = await spawnServer(binary, port, args);
        if (!next) throw new Error(`redis-server did not restart on port ${port}`);
        child = next;
      },
    };
  }
}

/** Starts redis-server on `port` (no persistence); resolves with the process once it accepts connections, or null. */
async function spawnServer(binary: string, port: number, args: string[]): Promise<ChildProcess | null> {
  const child = spawn(binary, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const ready = await new Promise<boolean>((resolve) => {
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes('Ready to accept connections')) resolve(true);
    });
    child.once('exit', () => resolve(false));
  });
  return ready ? child : null;
}

/** A key prefix no other test uses, so tests can share a server. */
export function uniquePrefix(name = 't'): string {
  return `${name}${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}`;
}

/** Calls of a command since the server started or the last CONFIG RESETSTAT, from INFO commandstats. */
export function commandCalls(info: string, command: string): number {
  const match = new RegExp(`^cmdstat_${command}:calls=(\\d+)`, 'm').exec(info);
  return match ? Number(match[1]) : 0;
}

/** Script calls (EVAL, EVALSHA and FCALL) the server on `admin` ran since its last RESETSTAT. */
export async function scriptCalls(admin: { info(section: string): Promise<string> }): Promise<number> {
  const stats = await admin.info('commandstats');
  return commandCalls(stats, 'eval') + commandCalls(stats, 'evalsha') + commandCalls(stats, 'fcall');
}
