import { defineRule, type EscalatingLockoutOptions, type RateLimitRule, type RateLimitStore } from '../../lib/index.js';
import { useStores, type StoreKind } from '../support/stores.js';

/**
 * Escalating lockouts: each refusal that starts a lockout less than forgetAfter after the previous one ended lasts
 * factor times longer, up to max; a quiet forgetAfter brings it back to base; reset() forgets the level. One
 * request a second is admitted, so every second request in the same instant is refused and starts a lockout.
 */
const MIN = 60_000;
const rule = (lockout: Partial<EscalatingLockoutOptions> = {}): RateLimitRule =>
  defineRule({ algorithm: 'sliding-log', limit: 1, window: '1s', lockout: { base: '1m', factor: 2, max: '4m', forgetAfter: '10m', ...lockout } }, 'login');

describe.each<StoreKind>(['memory', 'redis', 'cluster'])('escalating lockouts on the %s store', (kind) => {
  const get = useStores(kind);

  /** Uses the one request of the second, then starts a lockout with a second one: returns the refusal's wait. */
  async function lockOut(store: RateLimitStore, r: RateLimitRule, key = 'k'): Promise<number> {
    expect((await store.consume(key, r)).allowed).toBe(true);
    const refused = await store.consume(key, r);
    expect(refused.allowed).toBe(false);
    return refused.retryAfterMs;
  }

  it('lasts 1, 2, then 4 minutes when each lockout starts right after the previous one ended', async () => {
    const { store, clock } = get();
    const waits = [];
    for (let i = 0; i < 3; i++) {
      waits.push(await lockOut(store, rule()));
      clock.advance(waits[i]);
    }
    expect(waits).toEqual([MIN, 2 * MIN, 4 * MIN]);
  });

  it('never lasts longer than max, however many lockouts follow', async () => {
    const { store, clock } = get();
    const waits = [];
    for (let i = 0; i < 6; i++) {
      waits.push(await lockOut(store, rule({ max: '5m' })));
      clock.advance(waits[i]);
    }
    expect(waits).toEqual([MIN, 2 * MIN, 4 * MIN, 5 * MIN, 5 * MIN, 5 * MIN]);
  });

  it('reports resetAfterMs of the escalated lockout too', async () => {
    const { store, clock } = get();
    clock.advance(await lockOut(store, rule()));
    await store.consume('k', rule());
    expect(await store.consume('k', rule())).toMatchObject({ allowed: false, remaining: 0, retryAfterMs: 2 * MIN, resetAfterMs: 2 * MIN });
  });

  it('refuses a millisecond before the escalated wait and admits at it', async () => {
    const { store, clock } = get();
    clock.advance(await lockOut(store, rule()));
    const wait = await lockOut(store, rule());
    clock.advance(wait - 1);
    expect(await store.consume('k', rule())).toMatchObject({ allowed: false, retryAfterMs: 1 });
    clock.advance(1);
    expect((await store.consume('k', rule())).allowed).toBe(true);
  });

  it('escalates a lockout started a millisecond less than forgetAfter after the previous one ended', async () => {
    const { store, clock } = get();
    clock.advance((await lockOut(store, rule())) + 10 * MIN - 1);
    expect(await lockOut(store, rule())).toBe(2 * MIN);
  });

  it('starts again from base once forgetAfter has passed quietly since the previous lockout ended', async () => {
    const { store, clock } = get();
    clock.advance(await lockOut(store, rule()));
    clock.advance((await lockOut(store, rule())) + 10 * MIN);
    expect(await lockOut(store, rule())).toBe(MIN);
  });

  it('forgets the level on reset(), so that the next lockout lasts base again', async () => {
    const { store, clock } = get();
    clock.advance(await lockOut(store, rule()));
    clock.advance(await lockOut(store, rule()));
    await store.reset('k', rule());
    expect(await lockOut(store, rule())).toBe(MIN);
  });

  it('keeps each tracker\'s level apart', async () => {
    const { store, clock } = get();
    clock.advance(await lockOut(store, rule(), 'a'));
    expect([await lockOut(store, rule(), 'a'), await lockOut(store, rule(), 'b')]).toEqual([2 * MIN, MIN]);
  });

  it('does not escalate on refusals during a lockout, nor on peeks', async () => {
    const { store, clock } = get();
    await lockOut(store, rule());
    for (let i = 0; i < 3; i++) await store.consume('k', rule());
    expect((await store.peek('k', rule())).retryAfterMs).toBe(MIN);
    clock.advance(MIN);
    expect((await store.peek('k', rule())).allowed).toBe(true);
    expect(await lockOut(store, rule())).toBe(2 * MIN);
  });

  it('applies a factor changed live to the lockout in progress', async () => {
    const { store, clock } = get();
    clock.advance(await lockOut(store, rule()));
    await lockOut(store, rule());
    clock.advance(10_000);
    expect((await store.peek('k', rule({ factor: 3, max: '10m' }))).retryAfterMs).toBe(3 * MIN - 10_000);
  });

  it('applies a base changed live to the next lockout\'s level', async () => {
    const { store, clock } = get();
    clock.advance(await lockOut(store, rule()));
    expect(await lockOut(store, rule({ base: '30s' }))).toBe(MIN);
  });

  it('grows by a fractional factor to the nearest millisecond, the same on every store', async () => {
    const { store, clock } = get();
    const r = rule({ base: 1001, factor: 1.5, max: '1h' });
    const waits = [];
    for (let i = 0; i < 4; i++) {
      waits.push(await lockOut(store, r));
      clock.advance(waits[i]);
    }
    expect(waits).toEqual([1001, 1502, 2252, 3378]);
  });

  it('decides a consumeAll of an escalating rule and another rule all-or-nothing, escalating only the refusing rule', async () => {
    const { store, clock } = get();
    // One tracker under both rules: one hash slot, so that a Cluster decides them in one script as well.
    const other = defineRule({ limit: 100, window: '1h', algorithm: 'fixed-window' }, 'daily');
    clock.advance(await lockOut(store, rule()));
    const entries = [
      { key: 'k', rule: rule() },
      { key: 'k', rule: other },
    ];
    expect((await store.consumeAll(entries)).allowed).toBe(true);
    const refused = await store.consumeAll(entries);
    expect(refused.decisions.map((d) => [d.allowed, d.retryAfterMs, d.remaining])).toEqual([
      [false, 2 * MIN, 0],
      [true, 0, 99],
    ]);
  });
});
