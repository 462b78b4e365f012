import { defineRule, type RuleKey } from '../../lib/index.js';
import { STORE_KINDS, useStores } from '../support/stores.js';

describe.each(STORE_KINDS)('consumeAll on the %s store', (kind) => {
  const get = useStores(kind);
  // The SMS case: per phone 1 per minute, 5 per hour, 10 per day, all-or-nothing.
  const minute = defineRule({ algorithm: 'sliding-log', limit: 1, window: '1m' }, 'sms-minute');
  const hour = defineRule({ algorithm: 'sliding-window', limit: 5, window: '1h', segments: 60 }, 'sms-hour');
  const day = defineRule({ algorithm: 'gcra', limit: 10, window: '1d' }, 'sms-day');
  const sms = (phone: string): RuleKey[] => [minute, hour, day].map((rule) => ({ key: phone, rule }));

  it('admits when every rule admits and records in all of them', async () => {
    const { store } = get();
    const result = await store.consumeAll(sms('+15550001'));
    expect(result.allowed).toBe(true);
    expect(result.decisions.map((d) => d.remaining)).toEqual([0, 4, 9]);
  });

  it('uses up nothing in the minute rule when the hour rule refuses', async () => {
    const { store, clock } = get();
    for (let i = 0; i < 5; i++) {
      expect((await store.consumeAll(sms('+15550002'))).allowed).toBe(true);
      clock.advance(61_000);
    }
    const refused = await store.consumeAll(sms('+15550002'));
    expect(refused.allowed).toBe(false);
    expect(refused.decisions.map((d) => d.allowed)).toEqual([true, false, true]);
    expect(await store.peek('+15550002', minute)).toMatchObject({ allowed: true, remaining: 0 });
    expect(await store.peek('+15550002', day, 0)).toMatchObject({ remaining: 5 });
  });

  it('reports, for a refusal, the state of the rules that would have admitted as it is, uncharged', async () => {
    const { store, clock } = get();
    for (let i = 0; i < 5; i++) {
      await store.consumeAll(sms('+15550004'));
      clock.advance(61_000);
    }
    const refused = await store.consumeAll(sms('+15550004'));
    expect(refused.decisions[0]).toEqual(await store.peek('+15550004', minute, 0));
    expect(refused.decisions[2]).toEqual(await store.peek('+15550004', day, 0));
    expect(refused.decisions[2]).toMatchObject({ allowed: true, remaining: 5 });
  });

  it('reports, for a refusal, the wait of the rule that refused', async () => {
    const { store, clock } = get();
    await store.consumeAll(sms('+15550003'));
    clock.advance(20_000);
    const refused = await store.consumeAll(sms('+15550003'));
    expect(refused.decisions[0]).toMatchObject({ allowed: false, retryAfterMs: 40_000 });
  });

  it('decides rules of different trackers together', async () => {
    const { store } = get();
    const perIp = defineRule({ algorithm: 'fixed-window', limit: 2, window: '1m' }, 'ip');
    const perUser = defineRule({ algorithm: 'token-bucket', limit: 1, window: '1m' }, 'user');
    const login = (ip: string, user: string) => store.consumeAll([{ key: ip, rule: perIp }, { key: user, rule: perUser }]);
    expect((await login('10.0.0.1', 'alice')).allowed).toBe(true);
    expect((await login('10.0.0.1', 'alice')).allowed).toBe(false);
    expect((await login('10.0.0.1', 'bob')).allowed).toBe(true);
    expect((await login('10.0.0.1', 'carol')).allowed).toBe(false);
  });

  it('charges each entry its own cost, and the call cost to entries that name none', async () => {
    const { store } = get();
    const perRoute = defineRule({ algorithm: 'sliding-log', limit: 10, window: '1m' }, 'search');
    const global = defineRule({ algorithm: 'token-bucket', limit: 10, window: '1m' }, 'default');
    const result = await store.consumeAll([{ key: 'k', rule: perRoute, cost: 5 }, { key: 'k', rule: global }], 2);
    expect(result.decisions.map((d) => d.remaining)).toEqual([5, 8]);
    const refused = await store.consumeAll([{ key: 'k', rule: perRoute, cost: 6 }, { key: 'k', rule: global }], 2);
    expect(refused.decisions.map((d) => d.allowed)).toEqual([false, true]);
    expect(await store.peek('k', global, 0)).toMatchObject({ remaining: 8 });
  });

  it('starts the lockout of the rule that refused, not of the others', async () => {
    const { store } = get();
    const strict = defineRule({ algorithm: 'fixed-window', limit: 1, window: '1m', blockMs: '1h' }, 'strict');
    const loose = defineRule({ algorithm: 'fixed-window', limit: 10, window: '1m', blockMs: '1h' }, 'loose');
    const both: RuleKey[] = [{ key: 'k', rule: strict }, { key: 'k', rule: loose }];
    await store.consumeAll(both);
    const refused = await store.consumeAll(both);
    expect(refused.decisions[0].retryAfterMs).toBe(3_600_000);
    expect(await store.consume('k', loose)).toMatchObject({ allowed: true, remaining: 8 });
  });

  it('checks the cost against every rule before touching any', async () => {
    const { store } = get();
    await expect(store.consumeAll([{ key: 'k', rule: day }, { key: 'k', rule: minute }], 2)).rejects.toThrow(/sms-minute/);
    expect(await store.peek('k', day, 0)).toMatchObject({ remaining: 10 });
  });
});
