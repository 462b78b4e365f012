import type { INestApplication } from '@nestjs/common';
import { Registry } from 'prom-client';
import { defineRule, RateLimitModule, RateLimitService } from '../../lib/index.js';
import { ManualClock } from '../support/manual.clock.js';
import { attributeTexts, startTelemetry, type TestTelemetry } from '../support/open-telemetry.js';
import { uniquePrefix } from '../support/redis-server.js';
import { metricValue } from '../resilience/support/resilient-app.js';
import { STORE_KINDS, useStoreOptions } from './support/e2e-stores.js';
import { startApp } from './support/http-app.js';
import { decided, TracedModule, tracedGet } from './support/traced-app.js';

const storeOptions = useStoreOptions();
const job = defineRule({ limit: 1, window: '1m', algorithm: 'gcra' }, 'job');

describe.each(STORE_KINDS)('OpenTelemetry over HTTP and the service, with the %s store', (kind) => {
  let app: INestApplication;
  let service: RateLimitService;
  const registry = new Registry();
  let telemetry: TestTelemetry;

  beforeAll(async () => {
    telemetry = startTelemetry();
    // No meter given: the module takes the global MeterProvider's, registered before the app as an SDK would be.
    app = await startApp('express', {
      imports: [
        RateLimitModule.forRoot({ ...storeOptions(kind), keyPrefix: uniquePrefix('otel'), clock: new ManualClock().now, metrics: { registry }, openTelemetry: true, globalGuard: true }),
        TracedModule,
      ],
    });
    service = app.get(RateLimitService);
  });
  afterAll(async () => {
    await app?.close();
    await telemetry?.shutdown();
  });

  const get = (path: string, client: string) => tracedGet(app, telemetry, path, client);

  it('sets an admitted request\'s decision on its span', async () => {
    const answer = await get('/otel/one', 'tenant-secret-a');
    expect(answer).toEqual({ status: 200, attributes: decided('one', 'fixed-window', 'allowed', true) });
  });

  it('sets a refused request\'s decision on its span', async () => {
    await get('/otel/one', 'tenant-secret-b');
    await get('/otel/one', 'tenant-secret-b');
    const answer = await get('/otel/one', 'tenant-secret-b');
    expect(answer).toEqual({ status: 429, attributes: decided('one', 'fixed-window', 'rejected', false) });
  });

  it('marks a shadow rule\'s refusal, the request admitted', async () => {
    await get('/otel/shadow', 'tenant-secret-c');
    const answer = await get('/otel/shadow', 'tenant-secret-c');
    expect(answer).toEqual({ status: 200, attributes: decided('trial', 'sliding-log', 'shadow_rejected', true, { shadow: true }) });
  });

  it('names the refusing rule of several, with every rule\'s result in order', async () => {
    expect((await get('/otel/stacked', 'tenant-secret-d')).attributes).toEqual({
      // Admitted: the rule with least left, as the RateLimit headers report it.
      ...decided('burst', 'token-bucket', 'allowed', true),
      'ratelimit.rules': ['burst', 'sustained'],
      'ratelimit.results': ['allowed', 'allowed'],
    });
    expect(await get('/otel/stacked', 'tenant-secret-d')).toEqual({
      status: 429,
      attributes: { ...decided('burst', 'token-bucket', 'rejected', false), 'ratelimit.rules': ['burst', 'sustained'], 'ratelimit.results': ['rejected', 'allowed'] },
    });
  });

  it('sets a decision of the service on the span active in business code', async () => {
    const first = await telemetry.inSpan('job-1', () => service.consume('user-secret-e', job));
    const second = await telemetry.inSpan('job-2', () => service.consume('user-secret-e', job));
    expect([first.allowed, second.allowed]).toEqual([true, false]);
    expect(telemetry.rateLimitAttributes('job-1')).toEqual(decided('job', 'gcra', 'allowed', true));
    expect(telemetry.rateLimitAttributes('job-2')).toEqual(decided('job', 'gcra', 'rejected', false));
  });

  it('counts every decision as Prometheus does, under the same rule and result values', async () => {
    await get('/otel/one', 'tenant-secret-f');
    const decisions = await telemetry.points('ratelimit.decisions');
    expect(decisions.length).toBeGreaterThanOrEqual(6);
    for (const { attributes, value } of decisions) {
      const labels = { rule: String(attributes['ratelimit.rule']), result: String(attributes['ratelimit.result']) };
      expect([labels, value]).toEqual([labels, await metricValue(registry, 'rate_limit_decisions_total', labels)]);
    }
    // And the other way: no Prometheus series is missing.
    const { values } = await registry.getSingleMetric('rate_limit_decisions_total')!.get();
    expect(values.length).toBe(decisions.length);
    const [duration] = await telemetry.points('ratelimit.decision.duration');
    expect(duration.value).toBe(await metricValue(registry, 'rate_limit_decision_duration_seconds', {}, 'rate_limit_decision_duration_seconds_count'));
    for (const rule of ['one', 'trial', 'burst', 'sustained', 'job']) {
      const point = (await telemetry.points('ratelimit.window.utilization')).find((p) => p.attributes['ratelimit.rule'] === rule);
      expect([rule, point?.value]).toEqual([rule, await metricValue(registry, 'rate_limit_window_utilization', { rule }, 'rate_limit_window_utilization_count')]);
    }
  });

  it('describes its instruments with semantic-convention units', async () => {
    const units = Object.fromEntries((await telemetry.collect()).map((m) => [m.descriptor.name, m.descriptor.unit]));
    expect(units).toEqual({
      'ratelimit.decisions': '{decision}',
      'ratelimit.local_block.hits': '{hit}',
      'ratelimit.circuit.state': '1',
      'ratelimit.decision.duration': 's',
      'ratelimit.window.utilization': '1',
    });
  });

  it('puts no key, tracker or IP in any span or metric attribute', async () => {
    const texts = attributeTexts(telemetry.spans(), await telemetry.collect());
    expect(texts.length).toBeGreaterThan(50);
    expect(texts.filter((t) => /secret|127\.0\.0\.1|::1|x-client/.test(t))).toEqual([]);
  });
});

describe('OpenTelemetry left off, with an SDK registered', () => {
  let app: INestApplication;
  let telemetry: TestTelemetry;

  beforeAll(async () => {
    telemetry = startTelemetry();
    app = await startApp('express', { imports: [RateLimitModule.forRoot({ store: 'memory', metrics: false, globalGuard: true }), TracedModule] });
  });
  afterAll(async () => {
    await app?.close();
    await telemetry?.shutdown();
  });

  it('makes no instrument and sets no attribute', async () => {
    const answers = [await tracedGet(app, telemetry, '/otel/one', 'a'), await tracedGet(app, telemetry, '/otel/one', 'a'), await tracedGet(app, telemetry, '/otel/one', 'a')];
    expect(answers.map((a) => [a.status, a.attributes])).toEqual([[200, {}], [200, {}], [429, {}]]);
    expect(await telemetry.collect()).toEqual([]);
  });
});
