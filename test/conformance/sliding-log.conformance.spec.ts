import { defineRule } from '../../lib/index.js';
import { STORE_KINDS, useStores } from '../support/stores.js';

describe.each(STORE_KINDS)('sliding-log on the %s store', (kind) => {
  const get = useStores(kind);
  const rule = defineRule({ algorithm: 'sliding-log', limit: 3, window: 1000 }, 'log');

  it('admits exactly the limit, then refuses the next request', async () => {
    const { store } = get();
    const remaining = [];
    for (let i = 0; i < 3; i++) remaining.push((await store.consume('k', rule)).remaining);
    expect(remaining).toEqual([2, 1, 0]);
    expect(await store.consume('k', rule)).toMatchObject({ allowed: false, remaining: 0 });
  });

  it('counts requests made in the same millisecond separately', async () => {
    const { store } = get();
    const decisions = await Promise.all([1, 2, 3, 4].map(() => store.consume('k', rule)));
    expect(decisions.filter((d) => d.allowed)).toHaveLength(3);
  });

  it('frees a slot exactly one window after the request that took it', async () => {
    const { store, clock } = get();
    await store.consume('k', rule);
    clock.advance(400);
    await store.consume('k', rule);
    await store.consume('k', rule);
    const refused = await store.consume('k', rule);
    expect(refused.retryAfterMs).toBe(600);
    clock.advance(599);
    expect((await store.consume('k', rule)).allowed).toBe(false);
    clock.advance(1);
    expect((await store.consume('k', rule)).allowed).toBe(true);
  });

  it('records nothing for a refused request, so a client that keeps retrying gets through', async () => {
    const { store, clock } = get();
    for (let i = 0; i < 3; i++) await store.consume('k', rule);
    for (let i = 0; i < 50; i++) {
      clock.advance(10);
      await store.consume('k', rule);
    }
    clock.set(clock.ms + 500);
    expect((await store.consume('k', rule)).allowed).toBe(true);
  });

  it('needs cost free slots for a request of that cost and records all of them or none', async () => {
    const { store } = get();
    await store.consume('k', rule, 2);
    expect(await store.consume('k', rule, 2)).toMatchObject({ allowed: false, remaining: 1 });
    expect(await store.consume('k', rule, 1)).toMatchObject({ allowed: true, remaining: 0 });
  });

  it('reports the wait until enough of the oldest entries have left for a larger cost', async () => {
    const { store, clock } = get();
    await store.consume('k', rule);
    clock.advance(100);
    await store.consume('k', rule);
    clock.advance(100);
    await store.consume('k', rule);
    const refused = await store.consume('k', rule, 2);
    expect(refused.retryAfterMs).toBe(900);
  });

  it('reports the reset as the time until the newest entry leaves the window', async () => {
    const { store, clock } = get();
    await store.consume('k', rule);
    clock.advance(300);
    expect((await store.consume('k', rule)).resetAfterMs).toBe(1000);
    clock.advance(100);
    expect((await store.peek('k', rule, 0)).resetAfterMs).toBe(900);
  });

  it('does not let a clock that steps back reorder or collapse entries', async () => {
    const { store, clock } = get();
    await store.consume('k', rule);
    clock.advance(-200);
    await store.consume('k', rule);
    await store.consume('k', rule);
    expect((await store.consume('k', rule)).allowed).toBe(false);
  });
});
