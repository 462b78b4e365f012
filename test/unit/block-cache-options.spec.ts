import { defineRule, MemoryStore, RateLimitPolicies, RateLimitService } from '../../lib/index.js';
import { validateModuleOptions } from '../../lib/config/module-options.validator.js';
import { ManualClock } from '../support/manual.clock.js';

describe('the blockCache option', () => {
  it('bounds the cache at 10,000 refusals and 4 MiB by default', () => {
    expect(validateModuleOptions({})).toMatchObject({ blockCacheKeys: 10_000, blockCacheBytes: 4 * 1024 * 1024 });
  });

  it('takes maxBytes from blockCache', () => {
    expect(validateModuleOptions({ blockCache: { maxBytes: 1024 * 1024 } })).toMatchObject({ blockCacheKeys: 10_000, blockCacheBytes: 1024 * 1024 });
  });

  it.each([0, -1, 1.5, '4MB', null])('refuses blockCache.maxBytes %p, naming the field, the value and what is allowed', (maxBytes) => {
    expect(() => validateModuleOptions({ blockCache: { maxBytes } as never })).toThrow(
      expect.objectContaining({ field: 'blockCache.maxBytes', message: expect.stringContaining('a positive integer') }),
    );
  });

  it('names maxBytes among the fields blockCache takes', () => {
    expect(() => validateModuleOptions({ blockCache: 'yes' as never })).toThrow(/maxBytes/);
  });

  it('caches no refusal bigger than blockCache.maxBytes', async () => {
    const clock = new ManualClock();
    // Any store but the memory store itself, which gets no cache (below).
    const store = new (class SlowStore extends MemoryStore {})({ clock: clock.now });
    const service = new RateLimitService(store, new RateLimitPolicies({}), validateModuleOptions({ clock: clock.now, blockCache: { maxBytes: 1 } }));
    const entries = [{ key: 'alice', rule: defineRule({ limit: 1, window: '1m' }, 'login') }];
    await service.decide(entries);
    expect((await service.decide(entries)).allowed).toBe(false);
    expect(service.blockCache!.size).toBe(0);
  });

  it('is not used with the memory store, which finds a refusal as fast as the cache would, and exactly', async () => {
    const clock = new ManualClock();
    const store = new MemoryStore({ clock: clock.now });
    const service = new RateLimitService(store, new RateLimitPolicies({}), validateModuleOptions({ clock: clock.now }));
    const rule = defineRule({ limit: 1, window: '1m' }, 'login');
    await service.decide([{ key: 'alice', rule }]);
    expect((await service.decide([{ key: 'alice', rule }])).allowed).toBe(false);
    // A refund made on the store directly, which a cache in the service would not hear of, counts at once.
    await store.refund('alice', rule);
    expect((await service.decide([{ key: 'alice', rule }])).allowed).toBe(true);
    expect(service.blockCache).toBeUndefined();
  });
});
