import { defineRule, MemoryStore } from '../../lib/index.js';
import { ManualClock } from '../support/manual.clock.js';

describe('MemoryStore bounds', () => {
  it('keeps at most maxKeys keys under 100,000 distinct trackers, dropping the least recently used', async () => {
    const clock = new ManualClock();
    const store = new MemoryStore({ clock: clock.now, maxKeys: 1000 });
    const rule = defineRule({ algorithm: 'fixed-window', limit: 1, window: '1h' }, 'flood');
    await store.consume('kept', rule);
    for (let i = 0; i < 100_000; i++) {
      await store.consume(`flood-${i}`, rule);
      if (i % 500 === 0) await store.peek('kept', rule); // recently used: stays
    }
    expect(store.size).toBeLessThanOrEqual(1000);
    expect((await store.consume('kept', rule)).allowed).toBe(false);
    expect((await store.consume('flood-0', rule)).allowed).toBe(true);
  });

  it('drops expired state as it goes, without a timer', async () => {
    const clock = new ManualClock();
    const store = new MemoryStore({ clock: clock.now });
    const rule = defineRule({ algorithm: 'sliding-log', limit: 5, window: '1s' }, 'short');
    for (let i = 0; i < 1000; i++) await store.consume(`k${i}`, rule);
    clock.advance(1001);
    for (let i = 0; i < 1000; i++) await store.consume('other', rule).catch(() => undefined);
    expect(store.size).toBeLessThan(10);
  });

  it('refuses an invalid maxKeys', () => {
    expect(() => new MemoryStore({ maxKeys: 0 })).toThrow(/maxKeys/);
  });
});
