import { defineRule, type MultiDecision } from '../../lib/index.js';
import { LocalBlockCache } from '../../lib/resilience/local-block.cache.js';
import { ManualClock } from '../support/manual.clock.js';

const rule = defineRule({ limit: 1, window: '1m' }, 'login');
const refused: MultiDecision = { allowed: false, decisions: [{ allowed: false, limit: 1, remaining: 0, resetAfterMs: 60_000, retryAfterMs: 10_000 }] };
const signature = LocalBlockCache.signature([{ key: 'alice', rule }]);

describe('LocalBlockCache', () => {
  it('answers a cached refusal until its wait has passed, with the wait brought up to date', () => {
    const clock = new ManualClock(0);
    const cache = new LocalBlockCache(10, clock.now);
    cache.set(signature, refused, 10_000);
    clock.advance(4_000);
    expect(cache.get(signature)?.decisions[0]).toMatchObject({ retryAfterMs: 6_000, resetAfterMs: 56_000 });
    clock.advance(6_000);
    expect(cache.get(signature)).toBeUndefined();
    expect(cache.hits).toBe(1);
  });

  it('keeps nothing for an admitted request', () => {
    const cache = new LocalBlockCache();
    cache.set(signature, { allowed: true, decisions: [] }, 0);
    expect(cache.size).toBe(0);
  });

  it('tells requests of different costs apart', () => {
    const cache = new LocalBlockCache();
    cache.set(LocalBlockCache.signature([{ key: 'alice', rule }], 5), refused, 10_000);
    expect(cache.get(LocalBlockCache.signature([{ key: 'alice', rule }], 1))).toBeUndefined();
  });

  it('forgets the refusals of a rule and key after a reset, and only those', () => {
    const cache = new LocalBlockCache();
    const other = LocalBlockCache.signature([{ key: 'bob', rule }]);
    const both = LocalBlockCache.signature([{ key: 'x', rule: defineRule({ limit: 1, window: '1h' }, 'ip') }, { key: 'alice', rule }]);
    for (const s of [signature, other, both]) cache.set(s, refused, 10_000);
    cache.forget('login', 'alice');
    expect([cache.get(signature), cache.get(both)]).toEqual([undefined, undefined]);
    expect(cache.get(other)).toBeDefined();
  });

  it('holds at most maxKeys refusals, dropping the oldest', () => {
    const cache = new LocalBlockCache(2);
    for (const key of ['a', 'b', 'c']) cache.set(LocalBlockCache.signature([{ key, rule }]), refused, 10_000);
    expect(cache.size).toBe(2);
    expect(cache.get(LocalBlockCache.signature([{ key: 'a', rule }]))).toBeUndefined();
  });
});
