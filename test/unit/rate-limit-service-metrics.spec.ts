import { MemoryStore, RateLimitPolicies, RateLimitService, type RateLimitMetrics } from '../../lib/index.js';
import { validateModuleOptions } from '../../lib/config/module-options.validator.js';
import { MEMORY_DURATION_SAMPLE } from '../../lib/observability/decision.observer.js';
import { ManualClock } from '../support/manual.clock.js';

/** A store the service calls as any store (a subclass of MemoryStore is not decided synchronously): every request timed. */
class AnyStore extends MemoryStore {}

function recordingMetrics() {
  const decisions: string[] = [];
  const durations: number[] = [];
  const metrics: RateLimitMetrics = {
    decision: (rule, result) => decisions.push(`${rule}:${result}`),
    duration: (seconds) => durations.push(seconds),
    storeError: () => undefined,
    circuit: () => undefined,
    blockCacheHit: () => undefined,
  };
  return { metrics, decisions, durations };
}

describe('RateLimitService metrics', () => {
  const rules = { minute: { limit: 1, window: '1m' }, hour: { limit: 5, window: '1h', segments: 60 } };

  it('counts every rule of an admitted request, only the refusing rule of a refused one, and one duration per request', async () => {
    const clock = new ManualClock();
    const { metrics, decisions, durations } = recordingMetrics();
    const service = new RateLimitService(new AnyStore({ clock: clock.now }), new RateLimitPolicies({ rules }), validateModuleOptions({ clock: clock.now }), metrics);
    await service.consumeAll('phone', ['minute', 'hour']);
    await service.consumeAll('phone', ['minute', 'hour']);
    expect(decisions).toEqual(['minute:allowed', 'hour:allowed', 'minute:rejected']);
    expect(durations).toHaveLength(2);
  });

  it('times the first request and then one in MEMORY_DURATION_SAMPLE on the memory store, and counts every decision', async () => {
    const clock = new ManualClock();
    const { metrics, decisions, durations } = recordingMetrics();
    const service = new RateLimitService(new MemoryStore({ clock: clock.now }), new RateLimitPolicies({ rules }), validateModuleOptions({ clock: clock.now }), metrics);
    await service.consumeAll('first', ['minute']);
    expect(durations).toHaveLength(1);
    for (let i = 1; i < 2 * MEMORY_DURATION_SAMPLE; i++) await service.consumeAll(`phone-${i}`, ['minute']);
    expect(decisions).toHaveLength(2 * MEMORY_DURATION_SAMPLE);
    expect(durations).toHaveLength(2);
  });

  it('gives an onDecision hook every duration on the memory store', async () => {
    const clock = new ManualClock();
    const { metrics, durations } = recordingMetrics();
    const heard: number[] = [];
    const settings = validateModuleOptions({ clock: clock.now, onDecision: (event) => heard.push(event.durationMs) });
    const service = new RateLimitService(new MemoryStore({ clock: clock.now }), new RateLimitPolicies({ rules }), settings, metrics);
    for (let i = 0; i < 3; i++) await service.consumeAll(`phone-${i}`, ['minute']);
    expect(durations).toHaveLength(3);
    expect(heard).toHaveLength(3);
    for (const ms of heard) expect(ms).toBeGreaterThanOrEqual(0);
  });
});
