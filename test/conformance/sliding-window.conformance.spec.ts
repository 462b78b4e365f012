import { defineRule } from '../../lib/index.js';
import { STORE_KINDS, useStores } from '../support/stores.js';

describe.each(STORE_KINDS)('sliding-window on the %s store', (kind) => {
  const get = useStores(kind);
  // 10 cells of 100 ms.
  const rule = defineRule({ algorithm: 'sliding-window', limit: 4, window: 1000, segments: 10 }, 'cells');
  // The same rule 60 times slower: its keys live 60 s of Redis's own time. The test moves only the decisions' clock,
  // and a loaded machine can stall a client for longer than the 1 s rule's keys live on Redis's clock, which
  // expired them mid-test (8 admitted in one window of 4 via GLIDE, on a load run).
  const slow = defineRule({ algorithm: 'sliding-window', limit: 4, window: 60_000, segments: 10 }, 'slow-cells');

  it('never admits more than the limit in any interval of window - window/segments', async () => {
    const { store, clock } = get();
    clock.set(1_700_000_000_000);
    const admitted: number[] = [];
    // One attempt every 420 ms (7 ms of the 1 s rule) for 300 s: the densest traffic, with cells and windows cut everywhere.
    for (let t = 0; t < 300_000; t += 420) {
      clock.set(1_700_000_000_000 + t);
      if ((await store.consume('k', slow)).allowed) admitted.push(t);
    }
    const span = 60_000 - 6_000;
    for (let i = 0; i < admitted.length; i++) {
      const inSpan = admitted.filter((t) => t >= admitted[i] && t < admitted[i] + span).length;
      expect(inSpan).toBeLessThanOrEqual(4);
    }
    // And it does admit: roughly limit per window.
    expect(admitted.length).toBeGreaterThanOrEqual(18);
  });

  it('does not bring back old counts after an idle gap of any length', async () => {
    const { store, clock } = get();
    await store.consume('k', rule, 4);
    for (const gap of [1000, 1100, 9_900, 10_000, 123_456]) {
      clock.advance(gap);
      expect(await store.consume('k', rule, 4)).toMatchObject({ allowed: true, remaining: 0 });
    }
  });

  it('lets a cell go only when it has entirely left the window', async () => {
    const { store, clock } = get();
    clock.set(1_700_000_000_050); // halfway into a cell
    await store.consume('k', rule, 4);
    clock.set(1_700_000_000_999);
    expect((await store.consume('k', rule)).retryAfterMs).toBe(1);
    clock.set(1_700_000_001_000);
    expect((await store.consume('k', rule)).allowed).toBe(true);
  });

  it('keeps at most one field per cell', async () => {
    const { store, clock } = get();
    for (let i = 0; i < 4; i++) {
      clock.advance(30);
      await store.consume('k', rule);
    }
    expect((await store.peek('k', rule, 0)).remaining).toBe(0);
  });
});
