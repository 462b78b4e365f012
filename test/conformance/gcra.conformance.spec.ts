import { MemoryStore, RedisStore } from '../../lib/index.js';
import { STORE_KINDS, useStores } from '../support/stores.js';

type Throttling = MemoryStore | RedisStore;

describe.each(STORE_KINDS)('gcra on the %s store, against redis-cell', (kind) => {
  const get = useStores(kind);

  // redis-cell's own test table (lib.rs `it_rate_limits`): max_burst 4, 1 per second, so limit 5.
  // [ms since start, quantity, limited, remaining, reset after (ms), retry after (ms, -1 = none)]
  const table: [number, number, boolean, number, number, number][] = [
    [0, 6, true, 5, 0, -1],
    [0, 1, false, 4, 1000, -1],
    [0, 1, false, 3, 2000, -1],
    [0, 1, false, 2, 3000, -1],
    [0, 1, false, 1, 4000, -1],
    [0, 1, false, 0, 5000, -1],
    [0, 1, true, 0, 5000, 1000],
    [3000, 1, false, 2, 3000, -1],
    [3100, 1, false, 1, 3900, -1],
    [4000, 1, false, 1, 4000, -1],
    [8000, 1, false, 4, 1000, -1],
    [9500, 1, false, 4, 1000, -1],
    [9500, 0, false, 4, 1000, -1],
    [9500, 2, false, 2, 3000, -1],
    [9500, 5, true, 2, 3000, 3000],
  ];

  it('gives the same answers as redis-cell for its own test sequence', async () => {
    const { store, clock } = get();
    const start = clock.ms;
    for (const [at, quantity, limited, remaining, resetMs, retryMs] of table) {
      clock.set(start + at);
      const reply = await (store as Throttling).throttle('cell', 4, 1, 1, quantity);
      expect({ at, quantity, reply }).toEqual({
        at,
        quantity,
        reply: [limited ? 1 : 0, 5, remaining, retryMs < 0 ? -1 : Math.ceil(retryMs / 1000), Math.ceil(resetMs / 1000)],
      });
    }
  });

  it('reports the same sequence in milliseconds through consume and peek', async () => {
    const { store, clock } = get();
    const start = clock.ms;
    const { defineRule } = await import('../../lib/index.js');
    const rule = defineRule({ algorithm: 'gcra', limit: 1, window: '1s', burst: 5 }, 'cell');
    for (const [at, quantity, limited, remaining, resetMs, retryMs] of table.slice(1)) {
      clock.set(start + at);
      const d = quantity === 0 ? await store.peek('k', rule, 0) : await store.consume('k', rule, quantity);
      expect([at, d]).toEqual([at, { allowed: !limited, limit: 5, remaining, resetAfterMs: resetMs, retryAfterMs: limited ? retryMs : 0 }]);
    }
  });

  it('writes nothing for quantity 0', async () => {
    const { store, clock } = get();
    await (store as Throttling).throttle('cell', 4, 1, 1, 0);
    clock.advance(10);
    expect(await (store as Throttling).throttle('cell', 4, 1, 1, 0)).toEqual([0, 5, 5, -1, 0]);
  });
});
