import { defineRule, MemoryStore, RateLimitConfigError, type Decision, type RateLimitAlgorithm } from '../../lib/index.js';
import { useStores } from '../support/stores.js';

// Every µs quantity the scripts compute (now + window, a window's end, a lockout's end) stays exact in a double
// only while it is below 2^53: a fixed window of '200000d' passed it, and Redis admitted 7 of 50 under a limit of 5.
const ALGORITHMS: RateLimitAlgorithm[] = ['sliding-log', 'sliding-window', 'fixed-window', 'token-bucket', 'gcra'];
const MAX_WINDOW = '366d';
const cases = (['redis', 'cluster'] as const).flatMap((kind) => ALGORITHMS.map((algorithm) => [kind, algorithm] as const));

async function repeat(times: number, run: () => Promise<Decision>): Promise<Decision[]> {
  const decisions: Decision[] = [];
  for (let i = 0; i < times; i++) decisions.push(await run());
  return decisions;
}

describe.each(ALGORITHMS)('a %s rule with a window past the maximum', (algorithm) => {
  it('is refused where it is defined, before any store decides with it', () => {
    expect(() => defineRule({ algorithm, limit: 5, window: '200000d' }, 'forever')).toThrow(RateLimitConfigError);
  });
});

describe.each(cases)('a window and a lockout of the maximum on the %s store, %s', (kind, algorithm) => {
  const get = useStores(kind);

  it('admits exactly the limit of 50 requests, as the memory store does, decision for decision', async () => {
    const { store, clock } = get();
    const memory = new MemoryStore({ clock: clock.now });
    const rule = defineRule({ algorithm, limit: 5, window: MAX_WINDOW, blockMs: MAX_WINDOW }, 'year');
    const redis = await repeat(50, () => store.consume('k', rule));
    const twin = await repeat(50, () => memory.consume('k', rule));
    expect(redis.filter((d) => d.allowed)).toHaveLength(5);
    expect(redis).toEqual(twin);
  });

  it('reports the same waits as the memory store a window later', async () => {
    const { store, clock } = get();
    const memory = new MemoryStore({ clock: clock.now });
    const rule = defineRule({ algorithm, limit: 5, window: MAX_WINDOW }, 'year');
    for (const s of [store, memory]) await s.consume('k', rule, 5);
    clock.advance(366 * 86_400_000 - 1);
    expect(await store.peek('k', rule, 5)).toEqual(await memory.peek('k', rule, 5));
    clock.advance(1);
    expect(await store.consume('k', rule, 5)).toEqual(await memory.consume('k', rule, 5));
  });
});
