/**
 * The memory store's bound under a flood of distinct trackers: never more than `maxKeys` keys at any moment
 * (state and lockouts together), and the bound the module gives its own memory stores by default.
 */
import { Test, type TestingModule } from '@nestjs/testing';
import { defineRule, MemoryStore, RATE_LIMIT_STORE, RateLimitModule, ResilientStore, type RateLimitModuleOptions, type RuleKey } from '../../lib/index.js';
import { ManualClock } from '../support/manual.clock.js';

const DEFAULT_MAX_KEYS = 100_000;

/** Calls `step(i)` for i < count and returns the largest `size` seen after any of them. */
async function largestSize(store: MemoryStore, count: number, step: (i: number) => Promise<unknown>): Promise<number> {
  let largest = 0;
  for (let i = 0; i < count; i++) {
    await step(i);
    if (store.size > largest) largest = store.size;
  }
  return largest;
}

describe('MemoryStore bound under 100,000 distinct trackers', () => {
  const hour = defineRule({ algorithm: 'fixed-window', limit: 5, window: '1h' }, 'flood');

  it('never holds more than maxKeys (10,000) keys, and is full rather than emptied', async () => {
    const store = new MemoryStore({ clock: new ManualClock().now, maxKeys: 10_000 });
    const largest = await largestSize(store, 100_000, (i) => store.consume(`tracker-${i}`, hour));
    expect(largest).toBe(10_000);
    expect(store.size).toBe(10_000);
  });

  it('counts lockout keys toward the bound', async () => {
    const store = new MemoryStore({ clock: new ManualClock().now, maxKeys: 10_000 });
    const strict = defineRule({ algorithm: 'sliding-log', limit: 1, window: '1h', blockMs: '1d' }, 'strict');
    // Each tracker: one admitted request (a state key), one refused (a lockout key).
    const largest = await largestSize(store, 100_000, (i) => store.consume(`tracker-${i >> 1}`, strict));
    expect(largest).toBeLessThanOrEqual(10_000);
    expect((await store.consume('tracker-49999', strict)).retryAfterMs).toBe(86_400_000);
  });

  it('holds under consumeAll of three rules per tracker', async () => {
    const store = new MemoryStore({ clock: new ManualClock().now, maxKeys: 10_000 });
    const rules = [
      defineRule({ algorithm: 'sliding-window', limit: 5, window: '1m' }, 'a'),
      defineRule({ algorithm: 'token-bucket', limit: 5, window: '1h' }, 'b'),
      defineRule({ algorithm: 'gcra', limit: 5, window: '1d' }, 'c'),
    ];
    const entries = (i: number): RuleKey[] => rules.map((rule) => ({ key: `tracker-${i}`, rule }));
    const largest = await largestSize(store, 100_000 / 3, (i) => store.consumeAll(entries(i)));
    expect(largest).toBeLessThanOrEqual(10_000);
    expect(store.size).toBeGreaterThan(9_990);
  });
});

describe('the memory stores the module creates', () => {
  const contexts: TestingModule[] = [];
  afterEach(async () => {
    await Promise.all(contexts.splice(0).map((c) => c.close()));
  });
  async function moduleStore(options: RateLimitModuleOptions): Promise<unknown> {
    const ctx = await Test.createTestingModule({ imports: [RateLimitModule.forRoot({ clock: new ManualClock().now, ...options })] }).compile();
    contexts.push(ctx);
    return ctx.get(RATE_LIMIT_STORE);
  }
  const flood = defineRule({ algorithm: 'fixed-window', limit: 5, window: '1h' }, 'flood');
  const count = DEFAULT_MAX_KEYS + 20_000;

  it(`bound the default memory store at ${DEFAULT_MAX_KEYS.toLocaleString('en')} keys`, async () => {
    const store = await moduleStore({});
    expect(store).toBeInstanceOf(MemoryStore);
    const memory = store as MemoryStore;
    expect(await largestSize(memory, count, (i) => memory.consume(`tracker-${i}`, flood))).toBe(DEFAULT_MAX_KEYS);
  });

  it(`bound the memory fallback of a Redis store at ${DEFAULT_MAX_KEYS.toLocaleString('en')} keys`, async () => {
    // Never connected: the fallback alone is driven here.
    const store = await moduleStore({ store: 'redis://127.0.0.1:1' });
    expect(store).toBeInstanceOf(ResilientStore);
    const fallback = (store as ResilientStore).fallback;
    expect(await largestSize(fallback, count, (i) => fallback.consume(`tracker-${i}`, flood))).toBe(DEFAULT_MAX_KEYS);
  });

  it(`keep a lockout in the memory fallback of a Redis store through ${count.toLocaleString('en')} made-up trackers`, async () => {
    const store = (await moduleStore({ store: 'redis://127.0.0.1:1' })) as ResilientStore;
    const login = defineRule({ algorithm: 'fixed-window', limit: 5, window: '15m', blockMs: '1h' }, 'login');
    for (let i = 0; i < 6; i++) await store.fallback.consume('victim', login);
    for (let i = 0; i < count; i++) await store.fallback.consume(`made-up-${i}`, login);
    expect(await store.fallback.consume('victim', login)).toMatchObject({ allowed: false, retryAfterMs: 3_600_000 });
  });
});
