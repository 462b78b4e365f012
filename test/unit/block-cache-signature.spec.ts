import { defineRule, type RateLimitRuleOptions } from '../../lib/index.js';
import { LocalBlockCache } from '../../lib/resilience/local-block.cache.js';

const signatureOf = (options: RateLimitRuleOptions) => LocalBlockCache.signature([{ key: 'alice', rule: defineRule(options, 'plan') }]);

describe('LocalBlockCache.signature', () => {
  const base: RateLimitRuleOptions = { limit: 4, window: '1m' };

  it.each<[string, RateLimitRuleOptions]>([
    ['limit', { ...base, limit: 10_000 }],
    ['window', { ...base, window: '1h' }],
    ['algorithm', { ...base, algorithm: 'sliding-log' }],
    ['segments', { ...base, segments: 4 }],
    ['lockout', { ...base, blockMs: '5m' }],
    ['escalating lockout', { ...base, lockout: { base: '5m', factor: 3 } }],
  ])('tells apart requests whose rule differs only in its %s', (_, options) => {
    expect(signatureOf(options)).not.toBe(signatureOf(base));
  });

  it('tells apart token buckets that differ only in their refill, and GCRA rules only in their burst', () => {
    expect(signatureOf({ ...base, algorithm: 'token-bucket', refill: 2 })).not.toBe(signatureOf({ ...base, algorithm: 'token-bucket' }));
    expect(signatureOf({ ...base, algorithm: 'gcra', burst: 2 })).not.toBe(signatureOf({ ...base, algorithm: 'gcra' }));
  });

  it('gives two rule objects of the same values one signature, so a re-resolved rule still finds its refusal', () => {
    expect(signatureOf({ ...base })).toBe(signatureOf({ ...base }));
  });
});
