import type { INestApplication } from '@nestjs/common';
import { Registry } from 'prom-client';
import { defineRule, RateLimitModule, RateLimitService } from '../../lib/index.js';
import { startApp } from '../e2e/support/http-app.js';
import { decided, TracedModule, tracedGet } from '../e2e/support/traced-app.js';
import { attributeTexts, startTelemetry, type TestTelemetry } from '../support/open-telemetry.js';
import { startRedis, uniquePrefix, type TestRedis } from '../support/redis-server.js';
import { PATIENT_TIMEOUT_MS } from '../support/store-timeout.js';
import { killRedis, metricValue } from './support/resilient-app.js';

const job = defineRule({ limit: 1, window: '1m', algorithm: 'gcra' }, 'job');

describe('OpenTelemetry of decisions the failure policy made (Redis stopped, failurePolicy memory)', () => {
  let redis: TestRedis;
  let app: INestApplication;
  let telemetry: TestTelemetry;
  const registry = new Registry();
  const answers: Awaited<ReturnType<typeof tracedGet>>[] = [];
  let jobSpans: ReturnType<TestTelemetry['rateLimitAttributes']>[] = [];

  beforeAll(async () => {
    telemetry = startTelemetry();
    redis = await startRedis({ own: true });
    app = await startApp('express', {
      imports: [
        RateLimitModule.forRoot({
          store: `redis://127.0.0.1:${redis.port}`,
          keyPrefix: uniquePrefix('otel'),
          timeoutMs: PATIENT_TIMEOUT_MS,
          failurePolicy: 'memory',
          // Opened by the third failure, and kept open for the rest of the file.
          circuitBreaker: { failureThreshold: 3, minOpenMs: 600_000, maxOpenMs: 600_000 },
          metrics: { registry },
          // A meter passed in, as an app with its own MeterProvider would.
          openTelemetry: { meter: telemetry.meter },
          globalGuard: true,
        }),
        TracedModule,
      ],
    });
    answers.push(await tracedGet(app, telemetry, '/otel/one', 'tenant-secret-a'));
    await killRedis(redis);
    // Rule `one` admits 2 a minute: the embedded memory store admits two, refuses the third.
    for (let i = 0; i < 3; i++) answers.push(await tracedGet(app, telemetry, '/otel/one', 'tenant-secret-b'));
    const service = app.get(RateLimitService);
    await telemetry.inSpan('job-1', () => service.consume('user-secret-c', job));
    await telemetry.inSpan('job-2', () => service.consume('user-secret-c', job));
    jobSpans = ['job-1', 'job-2'].map((name) => telemetry.rateLimitAttributes(name));
  });
  afterAll(async () => {
    await app?.close();
    await redis?.stop();
    await telemetry?.shutdown();
  });

  it('marks the decisions of the failure policy degraded on their spans, admitted and refused', () => {
    expect(answers).toEqual([
      { status: 200, attributes: decided('one', 'fixed-window', 'allowed', true) },
      { status: 200, attributes: decided('one', 'fixed-window', 'degraded', true, { degraded: true }) },
      { status: 200, attributes: decided('one', 'fixed-window', 'degraded', true, { degraded: true }) },
      { status: 429, attributes: decided('one', 'fixed-window', 'degraded', false, { degraded: true }) },
    ]);
  });

  it('marks the service\'s degraded decisions on the span active in business code', () => {
    expect(jobSpans).toEqual([decided('job', 'gcra', 'degraded', true, { degraded: true }), decided('job', 'gcra', 'degraded', false, { degraded: true })]);
  });

  it('counts the degraded decisions, the store errors and the open circuit as Prometheus does', async () => {
    const decisions = await telemetry.points('ratelimit.decisions');
    const count = (rule: string, result: string) => decisions.find((p) => p.attributes['ratelimit.rule'] === rule && p.attributes['ratelimit.result'] === result)?.value;
    expect([count('one', 'allowed'), count('one', 'degraded'), count('job', 'degraded')]).toEqual([1, 3, 2]);
    for (const [rule, result] of [['one', 'allowed'], ['one', 'degraded'], ['job', 'degraded']]) {
      expect(count(rule, result)).toBe(await metricValue(registry, 'rate_limit_decisions_total', { rule, result }));
    }
    const errors = await telemetry.points('ratelimit.store.errors');
    expect(errors.map((p) => p.attributes)).toEqual([{ 'ratelimit.store.operation': 'consume' }]);
    expect(errors[0].value).toBe(await metricValue(registry, 'rate_limit_store_errors_total', { operation: 'consume' }));
    const [circuit] = await telemetry.points('ratelimit.circuit.state');
    expect(circuit.value).toBe(1);
    expect(circuit.value).toBe(await metricValue(registry, 'rate_limit_circuit_state'));
  });

  it('puts no key, tracker or IP in any span or metric attribute', async () => {
    const texts = attributeTexts(telemetry.spans(), await telemetry.collect());
    expect(texts.length).toBeGreaterThan(30);
    expect(texts.filter((t) => /secret|127\.0\.0\.1|::1|x-client/.test(t))).toEqual([]);
  });
});
