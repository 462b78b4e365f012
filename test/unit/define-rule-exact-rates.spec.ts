import { defineRule } from '../../lib/index.js';

/** Token bucket and GCRA count in units of 1/d µs (d = rate / gcd(window µs, rate)); capacities past 3.0e15 units are refused. */
describe('defineRule, token bucket and GCRA capacities counted exactly', () => {
  it('accepts every rate of up to 1000 per ms of a 1 s window', () => {
    for (const rate of [1, 7, 60_000, 150_000, 600_000, 999_999, 1_000_000]) {
      expect(() => defineRule({ algorithm: 'token-bucket', limit: rate, window: '1s', refill: rate }, 'tb')).not.toThrow();
      expect(() => defineRule({ algorithm: 'gcra', limit: rate, window: '1s', burst: rate }, 'gcra')).not.toThrow();
    }
  });

  it('accepts a year-long window whose refill divides it in µs', () => {
    expect(() => defineRule({ algorithm: 'token-bucket', limit: 1_000_000, window: '365d', refill: 1_000_000 }, 'tb')).not.toThrow();
  });

  it('refuses a token bucket whose capacity in units of 1/d µs passes 3.0e15, naming limit, the product and the maximum', () => {
    expect(() => defineRule({ algorithm: 'token-bucket', limit: 997, window: '365d', refill: 997 }, 'tb', 'rules.tb')).toThrow(
      /"rules\.tb\.limit": 997 \(expected a limit × window \(µs\) \/ gcd\(window \(µs\), refill\) of at most 3002399751580330 \(here 997 × 31536000000000\)/,
    );
  });

  it('refuses a GCRA whose tolerance in units of 1/d µs passes 3.0e15, naming burst, the product and the maximum', () => {
    expect(() => defineRule({ algorithm: 'gcra', limit: 997, window: '365d', burst: 500 }, 'g', 'rules.g')).toThrow(
      /"rules\.g\.burst": 500 \(expected a burst × window \(µs\) \/ gcd\(window \(µs\), limit\) of at most 3002399751580330 \(here 500 × 31536000000000\)/,
    );
  });
});
