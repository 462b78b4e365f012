import { MemoryStore, RateLimitPolicies, RateLimitService, type RateLimitMetrics } from '../../lib/index.js';
import { validateModuleOptions } from '../../lib/config/module-options.validator.js';
import { ManualClock } from '../support/manual.clock.js';

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
    const service = new RateLimitService(new MemoryStore({ clock: clock.now }), new RateLimitPolicies({ rules }), validateModuleOptions({ clock: clock.now }), metrics);
    await service.consumeAll('phone', ['minute', 'hour']);
    await service.consumeAll('phone', ['minute', 'hour']);
    expect(decisions).toEqual(['minute:allowed', 'hour:allowed', 'minute:rejected']);
    expect(durations).toHaveLength(2);
  });
});
