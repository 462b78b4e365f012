import { Counter, Histogram, Registry } from 'prom-client';
import type { RateLimitMetrics } from '../../lib/index.js';
import { RateLimitConfigError } from '../../lib/rules/rate-limit-config.error.js';
import { createMetrics, UTILIZATION_BUCKETS } from '../../lib/observability/rate-limit.metrics.js';

const DURATION_BUCKETS = [0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25];
const RESULTS = ['allowed', 'rejected', 'degraded', 'shadow_rejected'] as const;
const RULES = ['login', 'api', 'sms:day'];
const NAMES = ['rate_limit_decisions_total', 'rate_limit_decision_duration_seconds', 'rate_limit_local_block_hits_total', 'rate_limit_window_utilization'];

/** Deterministic pseudo-random numbers in [0, 1). */
function mulberry32(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * The per-decision metrics as prom-client's own Counter and Histogram count them, one inc() / observe() per
 * call: names, labels and buckets as the module declares them, help texts read from the registry under test.
 */
function promClientMetrics(registry: Registry, help: (name: string) => string): RateLimitMetrics {
  const registers = [registry];
  const decisions = new Counter({ name: NAMES[0], help: help(NAMES[0]), labelNames: ['rule', 'result'], registers });
  const latency = new Histogram({ name: NAMES[1], help: help(NAMES[1]), buckets: DURATION_BUCKETS, registers });
  const hits = new Counter({ name: NAMES[2], help: help(NAMES[2]), registers });
  const utilization = new Histogram({ name: NAMES[3], help: help(NAMES[3]), labelNames: ['rule'], buckets: UTILIZATION_BUCKETS, registers });
  return {
    decision: (rule, result) => decisions.labels({ rule, result }).inc(),
    duration: (seconds) => latency.observe(seconds),
    storeError: () => undefined,
    circuit: () => undefined,
    blockCacheHit: () => hits.inc(),
    utilization: (rule, ratio) => utilization.labels({ rule }).observe(ratio),
  };
}

/** A registry holding only the metrics counted in place (the store-error counter and circuit gauge are prom-client's own). */
async function countedRegistry(defaultLabels?: Record<string, string>) {
  const registry = new Registry();
  if (defaultLabels) registry.setDefaultLabels(defaultLabels);
  const metrics = await createMetrics({ registry });
  leaveCounted(registry);
  return { registry, metrics };
}

function leaveCounted(registry: Registry): void {
  for (const name of ['rate_limit_store_errors_total', 'rate_limit_circuit_state']) registry.removeSingleMetric(name);
}

async function referenceRegistry(ours: Registry, defaultLabels?: Record<string, string>) {
  const registry = new Registry();
  if (defaultLabels) registry.setDefaultLabels(defaultLabels);
  return { registry, metrics: promClientMetrics(registry, (name) => (ours.getSingleMetric(name) as unknown as { help: string }).help) };
}

/** A value on a bucket bound a third of the time (`le` is inclusive), else anywhere from 0 to past the last bound. */
function sample(random: () => number, bounds: readonly number[]): number {
  if (random() < 1 / 3) return bounds[Math.floor(random() * bounds.length)];
  return random() * bounds[bounds.length - 1] * 1.3;
}

/** The same random decisions told to both; `onStep` may scrape or reset in between. */
async function replay(seed: number, steps: number, targets: RateLimitMetrics[], onStep?: (step: number, random: () => number) => Promise<void> | void) {
  const random = mulberry32(seed);
  for (let step = 0; step < steps; step++) {
    const rule = RULES[Math.floor(random() * RULES.length)];
    const result = RESULTS[Math.floor(random() * RESULTS.length)];
    const ratio = sample(random, UTILIZATION_BUCKETS);
    const seconds = sample(random, DURATION_BUCKETS);
    const hit = random() < 0.2;
    const sampled = random() < 0.7;
    for (const m of targets) {
      m.decision(rule, result);
      if (sampled) m.utilization!(rule, ratio);
      m.duration(seconds);
      if (hit) m.blockCacheHit();
    }
    await onStep?.(step, random);
  }
}

describe('metrics counted in place and collected at scrape', () => {
  it('scrape the same text as prom-client before any decision', async () => {
    const ours = await countedRegistry();
    const reference = await referenceRegistry(ours.registry);
    expect(await ours.registry.metrics()).toBe(await reference.registry.metrics());
  });

  it.each(Array.from({ length: 12 }, (_, i) => i + 1))('scrape the same text and JSON as prom-client observe() calls for random decisions (seed %i)', async (seed) => {
    const ours = await countedRegistry();
    const reference = await referenceRegistry(ours.registry);
    await replay(seed, 40 + seed * 25, [ours.metrics, reference.metrics]);
    expect(await ours.registry.metrics()).toBe(await reference.registry.metrics());
    expect(await ours.registry.getMetricsAsJSON()).toEqual(await reference.registry.getMetricsAsJSON());
  });

  it('scrape the same text as prom-client between decisions and after registry resets, default labels on', async () => {
    const labels = { app: 'checkout' };
    const ours = await countedRegistry(labels);
    const reference = await referenceRegistry(ours.registry, labels);
    const texts: [string, string][] = [];
    await replay(99, 400, [ours.metrics, reference.metrics], async (step, random) => {
      if (random() < 0.05) {
        ours.registry.resetMetrics();
        reference.registry.resetMetrics();
      }
      if (step % 37 === 0) texts.push([await ours.registry.metrics(), await reference.registry.metrics()]);
    });
    for (const [mine, theirs] of texts) expect(mine).toBe(theirs);
  });

  it('drops a utilisation that is not a finite number instead of throwing from the decision', async () => {
    const { registry, metrics } = await countedRegistry();
    expect(() => metrics.utilization!('api', Number.NaN)).not.toThrow();
    metrics.utilization!('api', 0.5);
    expect(await registry.getSingleMetricAsString('rate_limit_window_utilization')).toContain('rate_limit_window_utilization_count{rule="api"} 1');
  });

  it('counts two apps sharing a registry into the same series, as one prom-client metric would', async () => {
    const first = await countedRegistry();
    const second = await createMetrics({ registry: first.registry });
    leaveCounted(first.registry);
    const reference = await referenceRegistry(first.registry);
    await replay(7, 200, [first.metrics, reference.metrics]);
    await replay(8, 200, [second, reference.metrics]);
    expect(await first.registry.metrics()).toBe(await reference.registry.metrics());
  });

  it('refuses at start-up a registry where a metric of other code holds one of its names, naming metrics.prefix', async () => {
    const registry = new Registry();
    new Counter({ name: 'rate_limit_window_utilization', help: 'not ours', registers: [registry] });
    const created = createMetrics({ registry });
    await expect(created).rejects.toBeInstanceOf(RateLimitConfigError);
    await expect(created).rejects.toMatchObject({ field: 'metrics.prefix', message: expect.stringContaining('rate_limit_window_utilization is already registered by other code') });
  });
});
