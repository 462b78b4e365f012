import { defineRule } from '../../lib/index.js';
import { DecisionObserver } from '../../lib/observability/decision.observer.js';
import { NO_METRICS } from '../../lib/observability/rate-limit.metrics.js';
import type { RateLimitMetrics } from '../../lib/interfaces/metrics.interface.js';

const recording = (durations: number[]): RateLimitMetrics => ({ ...NO_METRICS, duration: (seconds) => durations.push(seconds) });

describe('DecisionObserver timing', () => {
  it('reads no clock when metrics are off and no hook is set: nobody reads the duration', () => {
    expect(new DecisionObserver({}, NO_METRICS).start()).toBe(0);
    expect(new DecisionObserver({}).start()).toBe(0);
  });

  it.each([
    ['metrics on', {}, true],
    ['an onDecision hook', { onDecision: () => undefined }, false],
    ['an onRejected hook', { onRejected: () => undefined }, false],
  ] as const)('times decisions for %s', (_, settings, withMetrics) => {
    const durations: number[] = [];
    const observer = new DecisionObserver(settings, withMetrics ? recording(durations) : NO_METRICS);
    expect(observer.start()).toBeGreaterThan(0);
  });

  it('records one duration per request, measured from start(), whatever its number of rules', () => {
    const durations: number[] = [];
    const observer = new DecisionObserver({}, recording(durations));
    const started = observer.start();
    const d = { allowed: true, limit: 10, remaining: 9, resetAfterMs: 0, retryAfterMs: 0 };
    const rule = defineRule({ limit: 10, window: '1s', algorithm: 'fixed-window' }, 'r');
    observer.observe([{ key: 'k', rule }, { key: 'k', rule }], { allowed: true, decisions: [d, d] }, started, false);
    expect(durations).toHaveLength(1);
    expect(durations[0]).toBeGreaterThanOrEqual(0);
  });
});
