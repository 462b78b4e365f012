import { spawnSync } from 'node:child_process';

/** Stops the run at once, with a clear message, when there is no Redis to test against: never a mock. */
export default function globalSetup() {
  if (process.env.REDIS_URL) return;
  const found = spawnSync('redis-server', ['--version'], { encoding: 'utf8' });
  if (found.error || found.status !== 0) {
    throw new Error(
      'redis-server was not found on PATH. The tests run against a real Redis, never a mock: install it ' +
        '(Debian/Ubuntu: apt-get install redis-server; macOS: brew install redis) or set REDIS_URL=redis://host:port.',
    );
  }
}
