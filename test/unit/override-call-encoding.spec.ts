import { defineRule } from '../../lib/index.js';
import { encodeBatch } from '../../lib/stores/redis/redis-call.codec.js';
import { planRule } from '../../lib/stores/store.plan.js';

const plain = defineRule({ limit: 5, window: '1m', algorithm: 'fixed-window' }, 'api');
const overridable = defineRule({ limit: 5, window: '1m', algorithm: 'fixed-window', overrides: true }, 'api');
const consume = (rule: typeof plain) => ({ op: 'consume' as const, rules: [planRule('rl', 'acme', rule, 1, 'consume')] });

describe('script calls of overridable rules', () => {
  it('leaves a rule without overrides in the short form, with its state key alone', () => {
    expect(encodeBatch([consume(plain)], ['', ''], false)).toEqual({ keys: ['rl:api:fw1m:{acme}'], argv: ['', '', 'c', 'fw,5,60000,0'] });
  });

  it('sends an overridable rule in the batch form, its algorithm id marked and its override key after its state key', () => {
    expect(encodeBatch([consume(overridable)], ['', ''], false)).toEqual({
      keys: ['rl:api:fw1m:{acme}', 'rl:api:{acme}:override'],
      argv: ['', '', 1, 1, 0, 'c1', 'fw+,5,60000,0'],
    });
  });

  it('keeps the override key in the slot of the state key', () => {
    const { keys } = encodeBatch([consume(overridable)], ['', ''], false);
    expect(keys.map((k) => /\{[^}]*\}/.exec(k)![0])).toEqual(['{acme}', '{acme}']);
  });
});
