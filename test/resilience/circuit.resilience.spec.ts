import { Registry } from 'prom-client';
import type { CircuitBreakerOptions } from '../../lib/index.js';
import { cpuWaitMs } from '../support/cpu-wait.js';
import { startRedis, type TestRedis } from '../support/redis-server.js';
import { killRedis, metricValue, startResilientApp, waitFor, type ResilientApp } from './support/resilient-app.js';

// A Redis that is down fails every call at once (no offline queue); the breaker stops even trying, so that
// no request pays for a call that cannot succeed, and lets one probe through now and then.
describe('circuit breaker in front of a Redis that goes down', () => {
  let redis: TestRedis;
  let rl: ResilientApp;
  let registry: Registry;
  let storeCalls: number[];
  /** For each store call, how long this process had waited for a CPU by then (test/support/cpu-wait.ts). */
  let cpuWaits: number[];

  async function start(circuitBreaker: CircuitBreakerOptions) {
    registry = new Registry();
    redis = await startRedis({ own: true });
    rl = await startResilientApp(redis, { failurePolicy: 'open', metrics: { registry }, circuitBreaker });
    expect((await rl.get('warm')).status).toBe(200);
    // When each call reached the Redis store (performance.now()).
    storeCalls = [];
    cpuWaits = [];
    const consume = rl.redisStore.consume.bind(rl.redisStore);
    rl.redisStore.consume = (...args) => {
      storeCalls.push(performance.now());
      cpuWaits.push(cpuWaitMs());
      return consume(...args);
    };
  }
  afterEach(async () => {
    await rl?.close();
    await redis?.stop();
  });

  const circuitGauge = () => metricValue(registry, 'rate_limit_circuit_state');
  const storeErrors = () => metricValue(registry, 'rate_limit_store_errors_total', { operation: 'consume' });

  it('stops calling Redis after failureThreshold consecutive failures', async () => {
    await start({ failureThreshold: 3, minOpenMs: 5_000 });
    await killRedis(redis);
    for (let i = 0; i < 20; i++) expect((await rl.get('a')).status).toBe(200);
    expect(storeCalls).toHaveLength(3);
    expect(await storeErrors()).toBe(3);
    expect(rl.store.breaker.state).toBe('open');
    expect(await circuitGauge()).toBe(1);
    expect(rl.events.slice(-20).every((e) => e.result.decisions[0].degraded === 'open')).toBe(true);
  });

  it('probes after the open interval and closes the circuit once Redis is back', async () => {
    await start({ failureThreshold: 3, minOpenMs: 200 });
    await killRedis(redis);
    for (let i = 0; i < 5; i++) await rl.get('a');
    expect(rl.store.breaker.state).toBe('open');
    await redis.restart!();
    const restartedAt = performance.now();
    let requests = 0;
    await waitFor('a decision on Redis after the restart', async () => {
      requests++;
      await rl.get('a');
      return rl.events.at(-1)!.result.decisions[0].degraded === undefined;
    }, 5_000);
    const closedAfterMs = performance.now() - restartedAt;
    if (process.env.RESILIENCE_REPORT) console.log(`[circuit] closed ${closedAfterMs.toFixed(0)} ms after the restart; ${storeCalls.length - 3} probes for ${requests + 5 - 3} requests`);
    expect(rl.store.breaker.state).toBe('closed');
    expect(await circuitGauge()).toBe(0);
    // Every call after the threshold was a probe; all but the last failed. Fewer probes than requests after the
    // threshold: the two made while the circuit had just opened never reached the store. (Not fewer than those made
    // after the restart alone: a restart slower than minOpenMs makes the first of them the probe that closes it.)
    expect(await storeErrors()).toBe(storeCalls.length - 1);
    expect(storeCalls.length - 3).toBeLessThan(requests + 5 - 3);
  });

  it('doubles the open interval after each failed probe, up to maxOpenMs', async () => {
    await start({ failureThreshold: 1, minOpenMs: 100, maxOpenMs: 400 });
    await killRedis(redis);
    await waitFor('five probes', async () => {
      await rl.get('a');
      return storeCalls.length >= 6;
    }, 5_000);
    const gaps = storeCalls.slice(1).map((t, i) => t - storeCalls[i]);
    // A probe goes with the first request after the interval: each gap is at least the interval, never less.
    const intervals = [100, 200, 400, 400, 400];
    gaps.forEach((gap, i) => expect(gap).toBeGreaterThanOrEqual(intervals[i] - 2));
    // And about the interval: the first request after it probes (less the time the process waited for a CPU).
    expect(gaps[4] - (cpuWaits[5] - cpuWaits[4])).toBeLessThan(800);
  });
});
