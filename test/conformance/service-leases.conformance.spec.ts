import { jest } from '@jest/globals';
import { defineRule, RateLimitExceededException, RateLimitPolicies, RateLimitService, RedisStore, type RateLimitRule } from '../../lib/index.js';
import { validateModuleOptions } from '../../lib/config/module-options.validator.js';
import { MemoryLeaseStore } from '../../lib/stores/leases/memory-lease.store.js';
import { RedisLeaseStore } from '../../lib/stores/leases/redis-lease.store.js';
import { useStores } from '../support/stores.js';

const exports: RateLimitRule = defineRule({ algorithm: 'concurrency', limit: 1, leaseMs: '1s' }, 'exports');

describe.each(['memory', 'redis'] as const)('RateLimitService leases on the %s store', (kind) => {
  const get = useStores(kind);
  function service(): RateLimitService {
    const { store, clock, prefix } = get();
    const options = { clock: clock.now, keyPrefix: prefix };
    const leases = kind === 'memory' ? new MemoryLeaseStore(options) : new RedisLeaseStore((store as RedisStore).client, options);
    return new RateLimitService(store, new RateLimitPolicies({ rules: { exports: { algorithm: 'concurrency', limit: 1, leaseMs: '1s' } } }), validateModuleOptions(options), undefined, undefined, leases);
  }
  afterEach(() => jest.useRealTimers());

  it('refuses withLease with a 429 while the slots are held, without running the work', async () => {
    const rateLimit = service();
    const held = await rateLimit.acquire('u1', 'exports');
    const work = jest.fn(async () => 'done');
    const refusal = await rateLimit.withLease('u1', 'exports', work).catch((e: unknown) => e);
    expect(refusal).toBeInstanceOf(RateLimitExceededException);
    expect((refusal as RateLimitExceededException).getStatus()).toBe(429);
    expect(work).not.toHaveBeenCalled();
    await held.lease!.release();
  });

  it('releases the lease of withLease when the work throws', async () => {
    const rateLimit = service();
    await expect(rateLimit.withLease('u1', exports, () => Promise.reject(new Error('export failed')))).rejects.toThrow('export failed');
    expect(await rateLimit.withLease('u1', exports, () => 'second')).toBe('second');
  });

  it('frees one slot however many times a lease is released', async () => {
    const rateLimit = service();
    const first = await rateLimit.acquire('u1', exports);
    await first.lease!.release();
    await first.lease!.release();
    const second = await rateLimit.acquire('u1', exports);
    expect(second.acquired).toBe(true);
    expect((await rateLimit.acquire('u1', exports)).acquired).toBe(false);
    await second.lease!.release();
  });

  it('renews a held lease every leaseMs / 2, so a request longer than leaseMs keeps its slot', async () => {
    jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask'] });
    const rateLimit = service();
    const { clock } = get();
    const held = await rateLimit.acquire('u1', exports);
    for (let i = 0; i < 4; i++) {
      clock.advance(500);
      jest.advanceTimersByTime(500);
      // Let the renewal's round trip complete before time moves on.
      await new Promise((resolve) => setImmediate(resolve));
      await new Promise((resolve) => setImmediate(resolve));
    }
    // 2 s after the acquire, twice leaseMs: the slot is still held.
    expect((await rateLimit.acquire('u1', exports)).acquired).toBe(false);
    await held.lease!.release();
    expect((await rateLimit.acquire('u1', exports)).acquired).toBe(true);
  });

  it('stops renewing once released, so the slot stays free', async () => {
    jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask'] });
    const rateLimit = service();
    const held = await rateLimit.acquire('u1', exports);
    await held.lease!.release();
    jest.advanceTimersByTime(2_000);
    expect(held.lease!.released).toBe(true);
    expect(jest.getTimerCount()).toBe(0);
  });

  it('refunds the rate rules of a request whose lease is refused, and holds nothing for it', async () => {
    const rateLimit = service();
    const rate = defineRule({ algorithm: 'fixed-window', limit: 5, window: '1m' }, 'rate');
    const held = await rateLimit.acquire('u1', exports);
    const refused = await rateLimit.decideWithLeases([{ key: 'u1', rule: rate }, { key: 'u1', rule: exports }]);
    expect(refused.allowed).toBe(false);
    expect(refused.leases).toEqual([]);
    // A peek reports what a request would leave: 4 of 5 means nothing is counted.
    expect((await rateLimit.peek('u1', rate)).remaining).toBe(4);
    await held.lease!.release();
    const admitted = await rateLimit.decideWithLeases([{ key: 'u1', rule: rate }, { key: 'u1', rule: exports }]);
    expect([admitted.allowed, admitted.leases.length, admitted.decisions[0].remaining]).toEqual([true, 1, 4]);
    await admitted.leases[0].release();
  });
});
