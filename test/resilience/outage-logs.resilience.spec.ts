import type { LoggerService } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { once } from 'node:events';
import { Registry } from 'prom-client';
import { safeClientOptions, type RateLimitModuleOptions } from '../../lib/index.js';
import { startRedis, type TestRedis } from '../support/redis-server.js';
import { killRedis, metricValue, startResilientApp, Traffic, waitFor, type ResilientApp } from './support/resilient-app.js';

/** Every line the app logs from the moment it is installed, as `<level>: <message>`. */
class LinesLogger implements LoggerService {
  readonly lines: string[] = [];
  log(message: unknown) {
    this.lines.push(`log: ${String(message)}`);
  }
  warn(message: unknown) {
    this.lines.push(`warn: ${String(message)}`);
  }
  error(message: unknown) {
    this.lines.push(`error: ${String(message)}`);
  }
  debug() {}
  verbose() {}
}

const BACK = /^log: The rate-limit store is back after \d+\.\d s: deciding on it again$/;
const OPENED = 'warn: Circuit to the rate-limit store opened: deciding by the failure policy without calling it';
// Timing is not what these tests are about: a generous timeout keeps a busy machine from opening the circuit early.
const TIMEOUT_MS = 1_000;
// Probes every 20-40 ms, so that several fail within any outage of these tests.
const BREAKER = { failureThreshold: 3, minOpenMs: 20, maxOpenMs: 40 };

describe('the log of a Redis outage and its end', () => {
  let redis: TestRedis;
  let rl: ResilientApp | undefined;
  let logger: LinesLogger;
  let registry: Registry;

  beforeEach(async () => {
    redis = await startRedis({ own: true });
    registry = new Registry();
  });
  afterEach(async () => {
    await rl?.close();
    rl = undefined;
    await redis.stop();
  });

  async function start(options: RateLimitModuleOptions = {}) {
    rl = await startResilientApp(redis, { failurePolicy: 'memory', timeoutMs: TIMEOUT_MS, circuitBreaker: BREAKER, metrics: { registry }, ...options });
    logger = new LinesLogger();
    rl.app.useLogger(logger);
    expect((await rl.get('warm')).status).toBe(200);
  }

  const storeErrors = () => metricValue(registry, 'rate_limit_store_errors_total', { operation: 'consume' });
  const onRedis = () => rl!.events.at(-1)?.result.decisions.every((d) => !d.degraded) === true;
  const backLines = () => logger.lines.filter((line) => BACK.test(line));

  /** Requests until one is decided on Redis again, then a few more; stops the traffic of the outage first. */
  async function decideOnRedisAgain(traffic?: Traffic) {
    await traffic?.stop();
    await waitFor('a decision on Redis', async () => (await rl!.get('after')) && onRedis(), 5_000);
    for (let i = 0; i < 5; i++) await rl!.get('after');
  }

  it('logs one line when the client the module created reconnects, though no request saw the outage', async () => {
    await start();
    await killRedis(redis);
    await waitFor('the connection error', () => logger.lines.some((line) => line.startsWith('error: Redis connection error')));
    await redis.restart!();
    const restartedAt = logger.lines.length;
    await waitFor('the line saying Redis is back', () => backLines().length > 0, 5_000);
    await decideOnRedisAgain();
    expect(logger.lines.slice(restartedAt)).toEqual([expect.stringMatching(BACK)]);
  });

  it('logs one line when Redis goes away and one when it comes back, however many probes fail between, for the client the module created', async () => {
    await start();
    await killRedis(redis);
    const traffic = new Traffic(() => rl!.get('during'), 2);
    await waitFor('3 failures and 2 failed probes', async () => (await storeErrors()) >= BREAKER.failureThreshold + 2);
    await redis.restart!();
    await decideOnRedisAgain(traffic);
    expect(logger.lines.filter((line) => line === OPENED)).toHaveLength(1);
    expect(backLines()).toHaveLength(1);
  });

  it('logs one line when Redis stalls and one when it answers again, however many probes fail between, for a client passed in', async () => {
    const client: Redis = redis.client({ ...safeClientOptions(TIMEOUT_MS), lazyConnect: false });
    if (client.status !== 'ready') await once(client, 'ready');
    await start({ store: client });
    redis.process!.kill('SIGSTOP');
    const traffic = new Traffic(() => rl!.get('during'), 4);
    try {
      await waitFor('3 timeouts and 2 failed probes', async () => (await storeErrors()) >= BREAKER.failureThreshold + 2, 15_000);
    } finally {
      redis.process!.kill('SIGCONT');
    }
    await decideOnRedisAgain(traffic);
    expect(logger.lines.filter((line) => line === OPENED)).toHaveLength(1);
    expect(backLines()).toHaveLength(1);
  });
});
