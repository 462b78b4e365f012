import { defineRule, MemoryStore, RateLimitCostError, RateLimitDeadlineError, type RateLimitRule } from '../../lib/index.js';
import { ResilientStore } from '../../lib/resilience/resilient.store.js';
import { ManualClock } from '../support/manual.clock.js';

/** A primary that fails on demand: rejects at once, or never answers. The Redis tests break a real server. */
class FlakyStore extends MemoryStore {
  mode: 'ok' | 'reject' | 'hang' = 'ok';
  calls = 0;
  override async consume(key: string, rule: RateLimitRule, cost = 1) {
    this.calls++;
    if (this.mode === 'reject') throw new Error('ECONNREFUSED');
    if (this.mode === 'hang') return new Promise<never>(() => undefined);
    return super.consume(key, rule, cost);
  }
}

const rule = defineRule({ limit: 2, window: '1m' }, 'r');

function make(failurePolicy: 'open' | 'closed' | 'memory' = 'memory') {
  const clock = new ManualClock();
  const primary = new FlakyStore({ clock: clock.now });
  const fallback = new MemoryStore({ clock: clock.now });
  const errors: string[] = [];
  const store = new ResilientStore(primary, fallback, { timeoutMs: 20, failurePolicy, circuitBreaker: { failureThreshold: 2 }, onError: (e) => errors.push(e.message) });
  return { primary, fallback, store, errors };
}

/** A store whose circuit opened on a failing primary that is back now: the next call is the half-open probe. */
async function halfOpen(failurePolicy: 'open' | 'closed') {
  const made = make(failurePolicy);
  made.primary.mode = 'reject';
  await made.store.consume('k', rule);
  await made.store.consume('k', rule);
  expect(made.store.breaker.state).toBe('open');
  made.primary.mode = 'ok';
  made.store.breaker.probeNow();
  return made;
}

describe('ResilientStore', () => {
  it('passes decisions through while the primary answers', async () => {
    const { store } = make();
    const decision = await store.consume('k', rule);
    expect(decision).toMatchObject({ allowed: true, remaining: 1 });
    expect(decision).not.toHaveProperty('degraded');
  });

  it('decides on the memory store when the primary fails, and says so', async () => {
    const { store, primary, errors } = make('memory');
    primary.mode = 'reject';
    const decisions = [await store.consume('k', rule), await store.consume('k', rule), await store.consume('k', rule)];
    expect(decisions.map((d) => [d.allowed, d.degraded])).toEqual([[true, 'memory'], [true, 'memory'], [false, 'memory']]);
    expect(errors[0]).toBe('ECONNREFUSED');
  });

  it('admits without counting under the open policy', async () => {
    const { store, primary } = make('open');
    primary.mode = 'reject';
    expect(await store.consume('k', rule)).toMatchObject({ allowed: true, degraded: 'open' });
  });

  it('refuses under the closed policy', async () => {
    const { store, primary } = make('closed');
    primary.mode = 'reject';
    expect(await store.consume('k', rule)).toMatchObject({ allowed: false, degraded: 'closed', retryAfterMs: 1_000 });
  });

  it('gives up on a primary that does not answer within timeoutMs', async () => {
    const { store, primary, errors } = make('open');
    primary.mode = 'hang';
    expect(await store.consume('k', rule)).toMatchObject({ allowed: true, degraded: 'open' });
    expect(errors).toEqual(['The rate-limit store did not answer within 20 ms']);
  });

  it('stops calling the primary once the circuit is open', async () => {
    const { store, primary } = make('memory');
    primary.mode = 'reject';
    for (let i = 0; i < 5; i++) await store.consume(`k${i}`, rule);
    expect(primary.calls).toBe(2);
    expect(store.breaker.state).toBe('open');
  });

  it('applies the strictest policy among the rules of one request', async () => {
    const { store, primary } = make('open');
    primary.mode = 'reject';
    primary.consumeAll = () => Promise.reject(new Error('down'));
    const login = defineRule({ limit: 5, window: '1m', failurePolicy: 'closed' }, 'login');
    const result = await store.consumeAll([{ key: 'k', rule }, { key: 'k', rule: login }]);
    expect(result.allowed).toBe(false);
    expect(result.decisions.map((d) => d.degraded)).toEqual(['closed', 'closed']);
  });

  it('lets a bad cost through as the caller error it is', async () => {
    const { store } = make('open');
    await expect(store.consume('k', rule, 3)).rejects.toBeInstanceOf(RateLimitCostError);
  });

  describe.each(['closed', 'open'] as const)('a half-open probe that is a bad call (%s policy)', (policy) => {
    it.each([
      ['a number as key', 42 as unknown as string, 1],
      ['a cost of 1.5', 'k', 1.5],
    ])('throws %s to the caller and leaves the breaker able to close on the next good call', async (_what, key, cost) => {
      const { store } = await halfOpen(policy);
      await expect(store.consume(key, rule, cost)).rejects.toThrow(/Invalid (tracker key|cost)/);
      const next = await store.consume('k', rule);
      expect([next.degraded, store.breaker.state]).toEqual([undefined, 'closed']);
    });
  });

  it('throws a consumeAll naming one rule with two definitions before the breaker is asked, leaving a probe for the next call', async () => {
    const { store, primary } = await halfOpen('closed');
    const other = defineRule({ limit: 5, window: '1m' }, 'r');
    await expect(store.consumeAll([{ key: 'k', rule }, { key: 'k', rule: other }])).rejects.toThrow(/different definitions/);
    expect(await store.consume('k', rule)).not.toHaveProperty('degraded');
  });

  it('ends a probe on which the primary throws a caller error of its own, so the next call probes', async () => {
    const { store, primary } = await halfOpen('closed');
    const consume = primary.consume.bind(primary);
    primary.consume = () => Promise.reject(new RateLimitCostError('the primary says no'));
    await expect(store.consume('k', rule)).rejects.toBeInstanceOf(RateLimitCostError);
    primary.consume = consume;
    expect(await store.consume('k', rule)).not.toHaveProperty('degraded');
  });

  it('decides by the failure policy, never throws, when the primary fails with a TypeError of its own', async () => {
    const { store, primary, errors } = make('open');
    primary.consume = () => Promise.reject(new TypeError("Cannot read properties of undefined (reading 'write')"));
    expect(await store.consume('k', rule)).toMatchObject({ allowed: true, degraded: 'open' });
    expect(errors).toHaveLength(1);
  });

  it('decides by the failure policy, and ends the probe, when a custom primary returns a value instead of a promise', async () => {
    const { store, primary, errors } = await halfOpen('closed');
    const consume = primary.consume.bind(primary);
    primary.consume = (() => ({ allowed: true })) as unknown as typeof primary.consume;
    expect(await store.consume('k', rule)).toMatchObject({ allowed: false, degraded: 'closed' });
    expect(errors.at(-1)).toMatch(/then/);
    primary.consume = consume;
    store.breaker.probeNow();
    // The breaker was told of the failure, not left waiting on the probe: the next call probes, and closes it.
    expect(await store.consume('k', rule)).not.toHaveProperty('degraded');
    expect(store.breaker.state).toBe('closed');
  });

  it('does not open the circuit on deadline refusals whose round trip was prompt (a clock step, not an outage)', async () => {
    const { store, primary } = make('closed');
    primary.consume = () => Promise.reject(new RateLimitDeadlineError({ roundTripMs: 1, timeoutMs: 20 }));
    for (let i = 0; i < 3; i++) expect(await store.consume('k', rule)).toMatchObject({ degraded: 'closed' });
    expect(store.breaker.state).toBe('closed');
  });

  it('gives back a late admission whose refund misses its deadline more than 20 times in a row (a loaded machine)', async () => {
    const { store, primary, errors } = make('memory');
    let answer!: () => void;
    primary.consume = (key, r, cost) => new Promise((resolve) => (answer = () => resolve(MemoryStore.prototype.consume.call(primary, key, r, cost))));
    let missed = 0;
    primary.refund = (key, r, cost) => (++missed <= 30 ? Promise.reject(new RateLimitDeadlineError({ roundTripMs: 25, timeoutMs: 20 })) : MemoryStore.prototype.refund.call(primary, key, r, cost));
    expect(await store.consume('k', rule)).toMatchObject({ allowed: true, degraded: 'memory' });
    // The primary admits after its caller was decided by the fallback: that admission is given back.
    answer();
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(missed).toBe(31);
    const peek = (key: string) => MemoryStore.prototype.peek.call(primary, key, rule);
    expect(await peek('k')).toEqual(await peek('never-consumed'));
    expect(errors).toEqual(['The rate-limit store did not answer within 20 ms']);
  });

  it('resets what the memory store counted while the primary was away', async () => {
    const { store, primary, fallback } = make('memory');
    primary.mode = 'reject';
    await store.consume('k', rule);
    primary.mode = 'ok';
    await store.reset('k', rule);
    expect(await fallback.peek('k', rule)).toMatchObject({ remaining: 1 });
  });
});
