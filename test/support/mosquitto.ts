import { spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { killAndWait, spawnUntilReady } from './broker-process.js';
import { freePort } from './redis-server.js';

/** A Mosquitto broker this test started on a free loopback port; never the machine's own (1883). */
export interface TestMosquitto {
  /** `mqtt://127.0.0.1:<port>`, for `mqtt.connect(url)`. */
  url: string;
  port: number;
  /** Kills the broker (SIGKILL), waits until it has exited and removes its config dir. Safe to call twice. */
  stop(): Promise<void>;
}

export const MOSQUITTO = '/usr/sbin/mosquitto';

export const MOSQUITTO_MISSING =
  `mosquitto not found at ${MOSQUITTO}. The transport tests run against a real MQTT broker, never a mock: ` +
  'install it (Debian/Ubuntu: apt-get install mosquitto).';

/**
 * Starts a throwaway Mosquitto on 127.0.0.1 and a free port, anonymous clients allowed, no persistence; its
 * config file lives in a temp dir removed by `stop()`. Call it in `beforeAll` and `stop()` in `afterAll`.
 */
export async function startMosquitto(): Promise<TestMosquitto> {
  // `mosquitto -h` exits non-zero by design: only a failure to run the binary at all means it is missing.
  if (spawnSync(MOSQUITTO, ['-h']).error) throw new Error(MOSQUITTO_MISSING);
  const dir = mkdtempSync(join(tmpdir(), 'mosquitto-test-'));
  try {
    for (let attempt = 0; ; attempt++) {
      const port = await freePort();
      const config = join(dir, 'mosquitto.conf');
      writeFileSync(
        config,
        [`listener ${port} 127.0.0.1`, 'allow_anonymous true', 'persistence false', 'log_dest stderr', ''].join('\n'),
      );
      const started = await spawnMosquitto(config);
      if ('child' in started) {
        const { child } = started;
        return {
          url: `mqtt://127.0.0.1:${port}`,
          port,
          stop: async () => {
            await killAndWait(child);
            rmSync(dir, { recursive: true, force: true });
          },
        };
      }
      // The port was taken between our probe and the broker's bind: try another.
      if (attempt < 3 && started.output.includes('Address already in use')) continue;
      throw new Error(`mosquitto did not start on port ${port}:\n${started.output}`);
    }
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
}

/** Resolves with the process once it logs that it runs (the listener is bound), or with its output if it exits before. */
function spawnMosquitto(config: string): Promise<{ child: ChildProcess } | { output: string }> {
  return spawnUntilReady(MOSQUITTO, ['-c', config], /mosquitto version \S+ running/);
}
