import { defineRule } from '../../lib/index.js';
import { STORE_KINDS, useStores } from '../support/stores.js';

describe.each(STORE_KINDS)('fixed-window and token-bucket on the %s store', (kind) => {
  const get = useStores(kind);

  it('fixed-window: turns windows over on the epoch, so a burst can straddle a boundary', async () => {
    const { store, clock } = get();
    const rule = defineRule({ algorithm: 'fixed-window', limit: 3, window: '1s' }, 'fw');
    clock.set(1_700_000_000_900);
    expect((await store.consume('k', rule, 3)).resetAfterMs).toBe(100);
    expect((await store.consume('k', rule)).retryAfterMs).toBe(100);
    clock.set(1_700_000_001_000);
    expect(await store.consume('k', rule, 3)).toMatchObject({ allowed: true, resetAfterMs: 1000 });
  });

  it('token-bucket: refills continuously at refill tokens per window', async () => {
    const { store, clock } = get();
    // Capacity 10, 2 tokens per second: one every 500 ms.
    const rule = defineRule({ algorithm: 'token-bucket', limit: 10, window: '1s', refill: 2 }, 'tb');
    await store.consume('k', rule, 10);
    const refused = await store.consume('k', rule, 3);
    expect(refused).toMatchObject({ allowed: false, retryAfterMs: 1500, resetAfterMs: 5000 });
    clock.advance(1000);
    expect(await store.consume('k', rule, 2)).toMatchObject({ allowed: true, remaining: 0 });
    clock.advance(60_000);
    expect(await store.peek('k', rule, 0)).toMatchObject({ remaining: 10, resetAfterMs: 0 });
  });
});
