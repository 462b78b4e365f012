import { jest } from '@jest/globals';
import { Logger } from '@nestjs/common';
import type { Redis, RedisOptions } from 'ioredis';
import { once } from 'node:events';
import { Registry } from 'prom-client';
import { RateLimitModule, safeClientOptions, type RateLimitDecisionEvent } from '../../lib/index.js';
import { startApp } from '../e2e/support/http-app.js';
import { startRedis, uniquePrefix, type TestRedis } from '../support/redis-server.js';
import { killRedis, metricValue, startResilientApp, waitFor, type ResilientApp } from './support/resilient-app.js';

const AUDIT_MAX_LEN = 100;
// Timing is not what these tests are about: a generous timeout keeps a busy machine from degrading a decision.
const TIMEOUT_MS = 1_000;

describe('metrics, hooks and audit trail of decisions on Redis', () => {
  let redis: TestRedis;
  let admin: Redis;
  let rl: ResilientApp;
  const registry = new Registry();
  const rejected: RateLimitDecisionEvent[] = [];

  beforeAll(async () => {
    redis = await startRedis({ own: true });
    admin = redis.client();
    rl = await startResilientApp(redis, {
      timeoutMs: TIMEOUT_MS,
      metrics: { registry },
      onRejected: (event) => rejected.push(event),
      audit: { maxLen: AUDIT_MAX_LEN },
      defaultRule: { limit: 2, window: '1m', algorithm: 'sliding-log', key: 'header:x-client' },
    });
    // Two admitted, then one refused by Redis and two by the block cache.
    for (let i = 0; i < 5; i++) await rl.get('a');
  });
  afterAll(async () => {
    await rl?.close();
    await redis?.stop();
  });

  it('counts decisions by rule and result, and times each one', async () => {
    expect(await metricValue(registry, 'rate_limit_decisions_total', { rule: 'default', result: 'allowed' })).toBe(2);
    expect(await metricValue(registry, 'rate_limit_decisions_total', { rule: 'default', result: 'rejected' })).toBe(3);
    expect(await metricValue(registry, 'rate_limit_decision_duration_seconds', {}, 'rate_limit_decision_duration_seconds_count')).toBe(5);
    expect(await metricValue(registry, 'rate_limit_local_block_hits_total')).toBe(2);
    expect(await metricValue(registry, 'rate_limit_circuit_state')).toBe(0);
  });

  it('calls onDecision for every decision and onRejected for each refusal', () => {
    expect(rl.events.map((e) => [e.result.allowed, e.fromBlockCache])).toEqual([
      [true, false],
      [true, false],
      [false, false],
      [false, true],
      [false, true],
    ]);
    expect(rejected).toEqual(rl.events.slice(2));
    expect(rejected[0]).toMatchObject({ entries: [{ key: 'ItemsController.list|header:x-client:a', rule: 'default' }], durationMs: expect.any(Number) });
  });

  it('writes the refusal of the store to the audit stream with its rule, key and wait, not the repeats of the block cache', async () => {
    const streamKey = `${rl.keyPrefix}:audit`;
    await waitFor('1 audit entry', async () => (await admin.xlen(streamKey)) === 1);
    const entries = await admin.xrange(streamKey, '-', '+');
    for (const [, fields] of entries) {
      const record = Object.fromEntries(fields.reduce<string[][]>((pairs, v, i) => (i % 2 ? pairs : [...pairs, [v, fields[i + 1]]]), []));
      expect(record).toEqual({ rule: 'default', key: 'ItemsController.list|header:x-client:a', retryAfterMs: expect.stringMatching(/^\d+$/) });
      expect(Number(record.retryAfterMs)).toBeGreaterThan(0);
      expect(Number(record.retryAfterMs)).toBeLessThanOrEqual(60_000);
    }
  });

  it('keeps the audit stream near maxLen however many refusals there are', async () => {
    // Without the block cache, every refusal of a flood is the store's, and is written.
    const flood = await startResilientApp(redis, {
      timeoutMs: TIMEOUT_MS,
      metrics: false,
      blockCache: false,
      audit: { maxLen: AUDIT_MAX_LEN },
      defaultRule: { limit: 2, window: '1m', algorithm: 'sliding-log', key: 'header:x-client' },
    });
    const streamKey = `${flood.keyPrefix}:audit`;
    const addedBefore = 0;
    const refusals = 5 * AUDIT_MAX_LEN;
    await flood.get('a');
    await flood.get('a');
    try {
      for (let i = 0; i < refusals; i += 10) await Promise.all(Array.from({ length: 10 }, () => flood.get('a')));
    } finally {
      await flood.close();
    }
    await waitFor('every refusal written', async () => {
      const info = (await admin.xinfo('STREAM', streamKey)) as unknown[];
      return Number(info[info.indexOf('entries-added') + 1]) === addedBefore + refusals;
    });
    const length = await admin.xlen(streamKey);
    // MAXLEN ~ trims whole stream nodes (100 entries by default): never below maxLen, at most a node above it.
    expect(length).toBeGreaterThanOrEqual(AUDIT_MAX_LEN);
    expect(length).toBeLessThanOrEqual(AUDIT_MAX_LEN + 100);
  });
});

describe('metrics of decisions the failure policy made', () => {
  let redis: TestRedis;
  let rl: ResilientApp;
  const registry = new Registry();

  beforeAll(async () => {
    redis = await startRedis({ own: true });
    rl = await startResilientApp(redis, { failurePolicy: 'open', metrics: { registry }, circuitBreaker: { failureThreshold: 3, minOpenMs: 5_000 } });
    await rl.get('a');
    await killRedis(redis);
    for (let i = 0; i < 5; i++) await rl.get('a');
  });
  afterAll(async () => {
    await rl?.close();
    await redis?.stop();
  });

  it('counts them as degraded, apart from the allowed and rejected ones', async () => {
    expect(await metricValue(registry, 'rate_limit_decisions_total', { rule: 'default', result: 'allowed' })).toBe(1);
    expect(await metricValue(registry, 'rate_limit_decisions_total', { rule: 'default', result: 'degraded' })).toBe(5);
    expect(await metricValue(registry, 'rate_limit_decision_duration_seconds', {}, 'rate_limit_decision_duration_seconds_count')).toBe(6);
  });

  it('counts the store errors by operation', async () => {
    expect(await metricValue(registry, 'rate_limit_store_errors_total', { operation: 'consume' })).toBe(3);
  });

  it('shows the circuit open', async () => {
    expect(await metricValue(registry, 'rate_limit_circuit_state')).toBe(1);
  });
});

describe('a Redis client passed in with ioredis defaults', () => {
  let redis: TestRedis;
  beforeAll(async () => {
    redis = await startRedis({ own: true });
  });
  afterAll(() => redis?.stop());

  /** A client of the test's, connected as an application would pass it (closing one mid-handshake makes noise). */
  async function connected(options?: RedisOptions): Promise<Redis> {
    const client = redis.client(options);
    if (client.status !== 'ready') await once(client, 'ready');
    return client;
  }

  async function startupWarnings(client: Redis): Promise<string[]> {
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    try {
      const app = await startApp('express', { imports: [RateLimitModule.forRoot({ store: client, keyPrefix: uniquePrefix(), metrics: false })] });
      await app.close();
      return warn.mock.calls.map(([message]) => String(message));
    } finally {
      warn.mockRestore();
    }
  }

  it('logs a warning at start-up naming each unsafe setting', async () => {
    const warnings = await startupWarnings(await connected());
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/enableOfflineQueue is on.*autoResendUnfulfilledCommands is on.*maxRetriesPerRequest is 20/);
  });

  it('logs nothing for a client with the safe settings', async () => {
    const { lazyConnect: _lazy, ...safe } = safeClientOptions(50);
    expect(await startupWarnings(await connected(safe))).toEqual([]);
  });
});
