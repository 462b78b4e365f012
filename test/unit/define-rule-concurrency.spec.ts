import { defineRule, RateLimitConfigError } from '../../lib/index.js';

describe('defineRule with the concurrency algorithm', () => {
  it('takes a limit without a window and sets windowMs to the lease', () => {
    expect(defineRule({ algorithm: 'concurrency', limit: '3', leaseMs: '30s' }, 'exports')).toMatchObject({ algorithm: 'concurrency', limit: 3, leaseMs: 30_000, windowMs: 30_000, blockMs: 0 });
  });

  it('gives a lease of 2 minutes when leaseMs is not set', () => {
    expect(defineRule({ algorithm: 'concurrency', limit: 1 }).leaseMs).toBe(120_000);
  });

  it.each([
    ['window', { window: '1m' }, /exports\.window.*no window/],
    ['blockMs', { blockMs: '1m' }, /exports\.blockMs.*no lockout/],
    ['segments', { segments: 10 }, /exports\.segments.*sliding-window algorithm only/],
    ['refill', { refill: 10 }, /exports\.refill.*token-bucket algorithm only/],
    ['burst', { burst: 10 }, /exports\.burst.*gcra algorithm only/],
  ])('refuses %s on a concurrency rule, naming the field', (_field, extra, message) => {
    expect(() => defineRule({ algorithm: 'concurrency', limit: 2, ...extra }, 'exports')).toThrow(message);
  });

  it('refuses leaseMs on a window algorithm, naming the concurrency algorithm', () => {
    expect(() => defineRule({ limit: 2, window: '1m', leaseMs: '1m' }, 'rate')).toThrow(/rate\.leaseMs.*concurrency algorithm only/);
  });

  it.each([['999ms'], ['367d'], [0]])('refuses a leaseMs of %s, naming the allowed range', (leaseMs) => {
    expect(() => defineRule({ algorithm: 'concurrency', limit: 2, leaseMs }, 'exports')).toThrow(RateLimitConfigError);
    expect(() => defineRule({ algorithm: 'concurrency', limit: 2, leaseMs }, 'exports')).toThrow(/exports\.leaseMs/);
  });

  it('still refuses a window algorithm without a window', () => {
    expect(() => defineRule({ limit: 2 } as never, 'rate')).toThrow(/rate\.window/);
  });
});
