import { defineRule } from '../../lib/index.js';
import { useStores, type StoreKind } from '../support/stores.js';

// A lone surrogate is not text: encoding it as UTF-8 turns it into U+FFFD, so three different trackers would
// share one bucket unless the key is derived from what was sent.
const rule = defineRule({ limit: 1, window: '1m' }, 'surrogates');
const TRACKERS = ['a\ud800', 'a\udfff', 'a\ufffd'];

describe.each<StoreKind>(['memory', 'redis'])('trackers with lone surrogates (%s store)', (kind) => {
  const current = useStores(kind);

  it('counts a\\ud800, a\\udfff and a\\ufffd as three buckets', async () => {
    const { store } = current();
    const decisions = [];
    for (const tracker of TRACKERS) decisions.push(await store.consume(tracker, rule));
    expect(decisions.map((d) => d.allowed)).toEqual([true, true, true]);
  });

  it('still counts the same lone-surrogate tracker in one bucket', async () => {
    const { store } = current();
    await store.consume('a\ud800', rule);
    expect((await store.consume('a\ud800', rule)).allowed).toBe(false);
  });
});
