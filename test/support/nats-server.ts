import { spawnSync, type ChildProcess } from 'node:child_process';
import { killAndWait, spawnUntilReady } from './broker-process.js';
import { freePort } from './redis-server.js';

/** A nats-server this test started on a free loopback port; never the machine's own (4222). */
export interface TestNats {
  /** `nats://127.0.0.1:<port>`, for the client's `servers` option. */
  url: string;
  port: number;
  /** Kills the server (SIGKILL) and resolves once it has exited and its port is free. Safe to call twice. */
  stop(): Promise<void>;
}

export const NATS_SERVER = '/usr/sbin/nats-server';

export const NATS_SERVER_MISSING =
  `nats-server not found at ${NATS_SERVER}. The transport tests run against a real NATS server, never a mock: ` +
  'install it (Debian/Ubuntu: apt-get install nats-server).';

/**
 * Starts a throwaway nats-server on 127.0.0.1 and a free port: no JetStream, so nothing is written to disk.
 * Call it in `beforeAll` and `stop()` in `afterAll`.
 */
export async function startNatsServer(): Promise<TestNats> {
  const found = spawnSync(NATS_SERVER, ['--version'], { encoding: 'utf8' });
  if (found.error || found.status !== 0) throw new Error(NATS_SERVER_MISSING);
  for (let attempt = 0; ; attempt++) {
    const port = await freePort();
    const started = await spawnNats(port);
    if ('child' in started) {
      const { child } = started;
      return { url: `nats://127.0.0.1:${port}`, port, stop: () => killAndWait(child) };
    }
    // The port was taken between our probe and the server's bind: try another.
    if (attempt < 3 && started.output.includes('address already in use')) continue;
    throw new Error(`nats-server did not start on port ${port}:\n${started.output}`);
  }
}

/** Resolves with the process once it logs that it is ready, or with its output if it exits before. */
function spawnNats(port: number): Promise<{ child: ChildProcess } | { output: string }> {
  return spawnUntilReady(NATS_SERVER, ['-a', '127.0.0.1', '-p', String(port)], /Server is ready/);
}
