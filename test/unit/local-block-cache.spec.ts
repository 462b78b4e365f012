import { defineRule, type MultiDecision } from '../../lib/index.js';
import { LocalBlockCache } from '../../lib/resilience/local-block.cache.js';
import { ManualClock } from '../support/manual.clock.js';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

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

  describe('byte bound', () => {
    const MiB = 1024 * 1024;
    // A 90 KB `body:username`; each refusal below carries a different one.
    const big = 'u'.repeat(90 * 1024);
    const fill = (cache: LocalBlockCache, count: number) => {
      for (let i = 0; i < count; i++) cache.set(LocalBlockCache.signature([{ key: `${big}${i}`, rule }]), refused, 10_000);
    };

    it('keeps 10,000 refusals with distinct 90 KB keys under its 4 MiB default byte bound', () => {
      const cache = new LocalBlockCache();
      fill(cache, 10_000);
      expect(cache.bytes).toBeGreaterThan(0);
      expect(cache.bytes).toBeLessThanOrEqual(4 * MiB);
    });

    it('holds 10,000 refusals with distinct 90 KB keys in a few MB of heap, not a GB', () => {
      setFlagsFromString('--expose-gc');
      const gc = runInNewContext('gc') as () => void;
      gc();
      const before = process.memoryUsage().heapUsed;
      const cache = new LocalBlockCache();
      fill(cache, 10_000);
      gc();
      // The bound is 4 MiB of estimated bytes; 64 MB leaves room for the estimate and for V8's own slack.
      expect(process.memoryUsage().heapUsed - before).toBeLessThan(64 * MiB);
      expect(cache.size).toBeGreaterThan(0);
    });

    it('drops the oldest refusals first to stay under maxBytes', () => {
      const one = new LocalBlockCache();
      one.set(signature, refused, 10_000);
      const cache = new LocalBlockCache(10, undefined, one.bytes * 2);
      for (const key of ['a', 'b', 'c']) cache.set(LocalBlockCache.signature([{ key, rule }]), refused, 10_000);
      expect(cache.size).toBe(2);
      expect(cache.get(LocalBlockCache.signature([{ key: 'a', rule }]))).toBeUndefined();
      expect(cache.get(LocalBlockCache.signature([{ key: 'c', rule }]))).toBeDefined();
    });

    it('gives its bytes back when refusals expire, are forgotten or cleared', () => {
      const clock = new ManualClock(0);
      const cache = new LocalBlockCache(10, clock.now);
      cache.set(signature, refused, 10_000);
      cache.set(LocalBlockCache.signature([{ key: 'bob', rule }]), refused, 20_000);
      cache.set(LocalBlockCache.signature([{ key: 'carol', rule }]), refused, 20_000);
      clock.advance(10_000);
      cache.get(signature);
      cache.forget('login', 'bob');
      expect(cache.size).toBe(1);
      cache.clear();
      expect(cache.bytes).toBe(0);
    });
  });

  describe('long and unusual keys', () => {
    const long = 'k'.repeat(1_000);

    it('forgets a refusal with a long key after a reset', () => {
      const cache = new LocalBlockCache();
      const sig = LocalBlockCache.signature([{ key: long, rule }]);
      cache.set(sig, refused, 10_000);
      cache.forget('login', long);
      expect(cache.get(sig)).toBeUndefined();
    });

    it('tells apart two long keys that differ only in their last character', () => {
      expect(LocalBlockCache.signature([{ key: `${long}a`, rule }])).not.toBe(LocalBlockCache.signature([{ key: `${long}b`, rule }]));
    });

    it('tells apart long keys that differ only in a lone surrogate', () => {
      expect(LocalBlockCache.signature([{ key: `${long}\ud800`, rule }])).not.toBe(LocalBlockCache.signature([{ key: `${long}\ufffd`, rule }]));
    });

    it('keeps a key holding the signature separators from passing for a request of two rules', () => {
      const forged = LocalBlockCache.signature([{ key: 'a\u00001\u0001login\u0000b', rule }]);
      expect(forged).not.toBe(LocalBlockCache.signature([{ key: 'a', rule }, { key: 'b', rule }]));
    });
  });
});
