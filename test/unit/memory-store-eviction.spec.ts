/**
 * What the memory store forgets when it is full: expired state first, then keys seen only once, then counts,
 * and lockouts last, so a flood of made-up trackers cannot reset anyone else's budget or lockout.
 */
import { defineRule, MemoryStore, type Decision, type RateLimitRule } from '../../lib/index.js';
import { ManualClock } from '../support/manual.clock.js';

const HOUR_MS = 3_600_000;
const login = defineRule({ algorithm: 'fixed-window', limit: 5, window: '15m', blockMs: '1h' }, 'login');

/** `count` calls under distinct made-up trackers, one each, as a credential-stuffing flood sends them. */
async function flood(store: MemoryStore, rule: RateLimitRule, count: number, calls = 1, name = 'made-up'): Promise<void> {
  for (let i = 0; i < count; i++) for (let c = 0; c < calls; c++) await store.consume(`${name}-${i}`, rule);
}

/** Charges `key` under `rule` `times` times and returns the last decision. */
async function charge(store: MemoryStore, key: string, rule: RateLimitRule, times: number): Promise<Decision> {
  let last: Decision | undefined;
  for (let i = 0; i < times; i++) last = await store.consume(key, rule);
  return last!;
}

describe('MemoryStore eviction under a flood of made-up trackers (maxKeys 10,000)', () => {
  let store: MemoryStore;
  beforeEach(() => {
    store = new MemoryStore({ clock: new ManualClock().now, maxKeys: 10_000 });
  });

  it('still refuses a victim locked out for an hour after 100,000 requests under made-up usernames, with the same wait', async () => {
    const lockedOut = await charge(store, 'victim', login, 6);
    expect(lockedOut).toMatchObject({ allowed: false, retryAfterMs: HOUR_MS });
    await flood(store, login, 100_000);
    expect(await store.consume('victim', login)).toMatchObject({ allowed: false, retryAfterMs: lockedOut.retryAfterMs });
  });

  it('keeps the 4 of 5 attempts a user has used through the same flood', async () => {
    await charge(store, 'alice', login, 4);
    await flood(store, login, 100_000);
    expect(await store.consume('alice', login)).toMatchObject({ allowed: true, remaining: 0 });
    expect((await store.consume('alice', login)).allowed).toBe(false);
  });

  it('never holds more than maxKeys keys during the flood', async () => {
    await charge(store, 'victim', login, 6);
    let largest = 0;
    for (let i = 0; i < 30_000; i++) {
      await store.consume(`made-up-${i}`, login);
      largest = Math.max(largest, store.size);
    }
    expect(largest).toBe(10_000);
  });
});

describe('MemoryStore eviction order', () => {
  const second = defineRule({ algorithm: 'sliding-log', limit: 5, window: '1s' }, 'second');
  const hour = defineRule({ algorithm: 'fixed-window', limit: 5, window: '1h' }, 'hour');

  it('forgets expired state before live state, even live state older than it', async () => {
    const clock = new ManualClock();
    const memory = store(clock, 100);
    await flood(memory, hour, 50, 1, 'live'); // oldest, live for an hour, seen once
    await flood(memory, second, 50, 2, 'short'); // younger, charged twice, expired a second later
    clock.advance(2_000);
    await flood(memory, hour, 50, 1, 'new');
    // Each live tracker's second request of 5 leaves 3: the first was remembered.
    for (let i = 0; i < 50; i++) expect((await memory.consume(`live-${i}`, hour)).remaining).toBe(3);
  });

  it('forgets counts before lockouts once more than maxKeys keys are charged repeatedly', async () => {
    const memory = store(new ManualClock());
    const lockedOut = await charge(memory, 'victim', login, 6);
    await flood(memory, hour, 2_000, 2, 'repeat');
    expect(memory.size).toBeLessThanOrEqual(1_000);
    expect(await memory.consume('victim', login)).toMatchObject({ allowed: false, retryAfterMs: lockedOut.retryAfterMs });
  });

  it('still counts a new tracker when every kept key has been charged repeatedly', async () => {
    const memory = store(new ManualClock());
    await flood(memory, hour, 1_000, 2, 'repeat');
    expect((await charge(memory, 'newcomer', hour, 5)).allowed).toBe(true);
    expect((await memory.consume('newcomer', hour)).allowed).toBe(false);
  });

  function store(clock: ManualClock, maxKeys = 1_000): MemoryStore {
    return new MemoryStore({ clock: clock.now, maxKeys });
  }
});

describe('MemoryStore at maxKeys: a new key in an evicted key’s place', () => {
  // The table hands the node of the key it last evicted to the next new key (memory-key.table.ts, `fresh`).
  it('starts with its whole budget whatever the evicted key had used, and so does the evicted key when it comes back', async () => {
    const store = new MemoryStore({ clock: new ManualClock().now, maxKeys: 2 });
    const rule = defineRule({ algorithm: 'fixed-window', limit: 5, window: '15m' }, 'reuse');
    expect(await store.consume('spent', rule, 5)).toMatchObject({ allowed: true, remaining: 0 });
    await store.consume('other', rule);
    await store.consume('third', rule); // evicts 'spent', the oldest key seen once
    expect(await store.consume('new', rule)).toMatchObject({ allowed: true, remaining: 4 });
    expect(await store.consume('new', rule)).toMatchObject({ allowed: true, remaining: 3 });
    expect(store.size).toBe(2);
    expect(await store.consume('spent', rule)).toMatchObject({ allowed: true, remaining: 4 });
  });
});
