import { jest } from '@jest/globals';
import { RateLimitConfigError, RateLimitPolicies, RateLimitService, RateLimitWaitTimeoutError, type MultiDecision } from '../../lib/index.js';
import { validateModuleOptions } from '../../lib/config/module-options.validator.js';
import { CountingStore } from '../support/counting.store.js';
import { useStores } from '../support/stores.js';

/** A payment provider's limits: 100 per second and 5,000 per minute, both fixed windows (aligned on the epoch). */
const RULES = {
  'psp-second': { algorithm: 'fixed-window', limit: 100, window: '1s' },
  'psp-minute': { algorithm: 'fixed-window', limit: 5000, window: '1m' },
  'sms-second': { algorithm: 'fixed-window', limit: 10, window: '1s' },
  monthly: { algorithm: 'sliding-log', limit: 1, window: '30d' },
} as const;
const PSP = ['psp-second', 'psp-minute'];

/**
 * waitToConsume on both stores, deterministically: the stores decide on a clock the test moves, and the waiter sleeps
 * on jest's fake timers (its `performance.now()` and `setTimeout`), moved together with it.
 */
describe.each(['memory', 'redis'] as const)('waitToConsume on the %s store', (kind) => {
  const get = useStores(kind);
  let store: CountingStore;
  let limits: RateLimitService;

  beforeEach(() => {
    jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask'] });
    const { store: inner, clock, prefix } = get();
    // On a minute's boundary, so that the second and the minute windows start together.
    clock.set(Math.ceil(clock.ms / 60_000) * 60_000);
    store = new CountingStore(inner);
    limits = new RateLimitService(store, new RateLimitPolicies({ rules: RULES }), validateModuleOptions({ clock: clock.now, keyPrefix: prefix }));
  });
  afterEach(() => {
    limits.onModuleDestroy();
    jest.useRealTimers();
  });

  /** Moves the stores' clock and the waiter's timers together, then lets the calls it set off be answered. */
  async function advance(ms: number): Promise<void> {
    get().clock.advance(ms);
    jest.advanceTimersByTime(ms);
    await store.idle();
  }

  /** The call's outcome so far: 'waiting' until it settles. */
  function watch(call: Promise<MultiDecision>): { state: string; order?: number } {
    const seen: { state: string } = { state: 'waiting' };
    call.then(
      () => (seen.state = 'resolved'),
      (e: Error) => (seen.state = e.name),
    );
    return seen;
  }

  it('resolves at once when every rule admits, taking the units from each, with no timer left', async () => {
    const result = await limits.waitToConsume('psp', PSP);
    expect(result.decisions.map((d) => [d.allowed, d.remaining])).toEqual([[true, 99], [true, 4999]]);
    expect({ calls: store.calls, timers: jest.getTimerCount() }).toEqual({ calls: 1, timers: 0 });
  });

  it('waits exactly the wait the refusal reported, with no call to the store in between', async () => {
    await limits.consumeAll('psp', PSP, 100);
    const call = watch(limits.waitToConsume('psp', PSP));
    await store.idle();
    await advance(999);
    expect({ state: call.state, calls: store.calls }).toEqual({ state: 'waiting', calls: 2 });
    await advance(1);
    expect({ state: call.state, calls: store.calls }).toEqual({ state: 'resolved', calls: 3 });
  });

  it('is all-or-nothing over 100/s and 5,000/min: a full minute waits for the minute, taking nothing from the second', async () => {
    for (let s = 0; s < 50; s++) {
      expect((await limits.consumeAll('psp', PSP, 100)).allowed).toBe(true);
      get().clock.advance(1_000);
    }
    // 50 s into the minute, its 5,000 are taken; the second rule has its 100.
    const call = watch(limits.waitToConsume('psp', PSP, { cost: 10 }));
    await store.idle();
    // A peek reports what one more request would leave: 99 of 100 means nothing was taken.
    expect((await limits.peek('psp', 'psp-second')).remaining).toBe(99);
    await advance(9_999);
    expect(call.state).toBe('waiting');
    await advance(1);
    expect(call.state).toBe('resolved');
    expect((await limits.peek('psp', 'psp-minute')).remaining).toBe(4989);
  });

  it('rejects at once with RateLimitWaitTimeoutError when the reported wait passes maxWaitMs, taking nothing', async () => {
    await limits.consumeAll('psp', PSP, 100);
    get().clock.advance(200);
    const error = await limits.waitToConsume('psp', PSP, { maxWaitMs: 500 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RateLimitWaitTimeoutError);
    expect({ ...(error as RateLimitWaitTimeoutError) }).toMatchObject({ retryAfterMs: 800, maxWaitMs: 500, leftMs: 500 });
    expect({ timers: jest.getTimerCount(), remaining: (await limits.peek('psp', 'psp-minute')).remaining }).toEqual({ timers: 0, remaining: 4899 });
  });

  it('rejects a later call whose maxWaitMs ends before the sleeping queue asks again, without asking the store', async () => {
    await limits.consumeAll('psp', PSP, 100);
    const first = watch(limits.waitToConsume('psp', PSP));
    await store.idle();
    const calls = store.calls;
    await expect(limits.waitToConsume('psp', PSP, { maxWaitMs: 999 })).rejects.toMatchObject({ name: 'RateLimitWaitTimeoutError', retryAfterMs: 1000 });
    expect(store.calls).toBe(calls);
    await advance(1_000);
    expect(first.state).toBe('resolved');
  });

  it('rejects with the signal\'s reason on abort and clears its timer at once', async () => {
    await limits.consumeAll('psp', PSP, 100);
    const controller = new AbortController();
    const call = limits.waitToConsume('psp', PSP, { signal: controller.signal });
    await store.idle();
    expect(jest.getTimerCount()).toBe(1);
    controller.abort();
    await expect(call).rejects.toMatchObject({ name: 'AbortError' });
    expect(jest.getTimerCount()).toBe(0);
    await expect(limits.waitToConsume('psp', PSP, { signal: AbortSignal.abort(new Error('gone')) })).rejects.toThrow('gone');
  });

  it('gives back what an admission took when its call was aborted while the store decided', async () => {
    const controller = new AbortController();
    const call = limits.waitToConsume('psp', PSP, { cost: 7, signal: controller.signal });
    controller.abort();
    await expect(call).rejects.toMatchObject({ name: 'AbortError' });
    await store.idle();
    // What one more request would leave: nothing is taken.
    expect((await Promise.all(PSP.map((rule) => limits.peek('psp', rule)))).map((d) => d.remaining)).toEqual([99, 4999]);
  });

  it('serves the calls of one process in arrival order, the head alone asking the store after each wake-up', async () => {
    await limits.consumeAll('phone', ['sms-second'], 10);
    const served: number[] = [];
    const calls = Array.from({ length: 25 }, (_, i) => limits.waitToConsume('phone', 'sms-second').then(() => served.push(i)));
    await store.idle();
    expect(store.calls).toBe(2);
    const asked: number[] = [];
    for (let s = 0; s < 3; s++) {
      const before = store.calls;
      await advance(1_000);
      asked.push(store.calls - before);
    }
    await Promise.all(calls);
    expect(served).toEqual(Array.from({ length: 25 }, (_, i) => i));
    // Each wake-up: one call per admission, then the one refusal that puts the queue back to sleep (none after the last).
    expect(asked).toEqual([11, 11, 5]);
  });

  it('sleeps no longer than a timer can (2^31 - 1 ms), then asks again, on a wait of 30 days', async () => {
    await limits.consumeAll('report', ['monthly']);
    const call = watch(limits.waitToConsume('report', 'monthly'));
    await store.idle();
    const calls = store.calls;
    await advance(2_147_483_647);
    expect({ state: call.state, calls: store.calls - calls, timers: jest.getTimerCount() }).toEqual({ state: 'waiting', calls: 1, timers: 1 });
    await advance(30 * 86_400_000 - 2_147_483_647);
    expect(call.state).toBe('resolved');
  });

  it('refuses bad options and unknown rules with RateLimitConfigError naming them, before asking the store', async () => {
    const bad = [
      [{ cost: 0 }, 'cost'],
      [{ cost: 1.5 }, 'cost'],
      [{ maxWaitMs: -1 }, 'maxWaitMs'],
      [{ maxWaitMs: Infinity }, 'maxWaitMs'],
      [{ maxWaitMs: NaN }, 'maxWaitMs'],
      [{ signal: {} }, 'signal'],
    ] as const;
    for (const [options, field] of bad) {
      await expect(limits.waitToConsume('psp', PSP, options as never)).rejects.toMatchObject({ name: 'RateLimitConfigError', field });
    }
    await expect(limits.waitToConsume('psp', ['psp-hour'])).rejects.toBeInstanceOf(RateLimitConfigError);
    await expect(limits.waitToConsume('psp', [])).rejects.toMatchObject({ name: 'RateLimitConfigError', field: 'rules' });
    expect(store.calls).toBe(0);
  });
});
