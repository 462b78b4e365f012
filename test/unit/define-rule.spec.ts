import { defineRule, MAX_SLIDING_LOG_LIMIT, MAX_WINDOW_MS, parseDuration, RateLimitConfigError } from '../../lib/index.js';

describe('defineRule', () => {
  it('fills defaults and turns durations into milliseconds', () => {
    expect(defineRule({ limit: 100, window: '1m' }, 'api')).toEqual({
      name: 'api',
      algorithm: 'sliding-window',
      limit: 100,
      windowMs: 60_000,
      segments: 10,
      blockMs: 0,
      refill: 100,
      burst: 100,
    });
  });

  it('accepts numbers that arrive as strings from env vars', () => {
    expect(defineRule({ limit: '5', window: '60s', blockMs: '15m', algorithm: 'sliding-log' }, 'login')).toMatchObject({ limit: 5, windowMs: 60_000, blockMs: 900_000 });
  });

  it.each([
    [{ limit: 'abc', window: '1m' }, /"rules\.x\.limit": "abc" \(expected an integer of 1 or more\)/],
    [{ limit: -5, window: '1m' }, /"rules\.x\.limit": -5/],
    [{ limit: 1.5, window: '1m' }, /"rules\.x\.limit": 1\.5/],
    [{ limit: 5, window: '1 fortnight' }, /"rules\.x\.window": "1 fortnight"/],
    [{ limit: 5, window: '60' }, /"rules\.x\.window": "60" \(expected a unit: "60s" for seconds or "60ms" for milliseconds/],
    [{ limit: 5, window: '-1m' }, /"rules\.x\.window": "-1m"/],
    [{ limit: 5, window: 0 }, /"rules\.x\.window": 0/],
    [{ limit: 5, window: '1.0001s' }, /"rules\.x\.window": "1\.0001s".*whole milliseconds/],
    [{ limit: 5, window: '1m', algorithm: 'leaky' }, /"rules\.x\.algorithm": "leaky" \(expected one of sliding-log/],
    [{ limit: 5, window: '1m', segments: 1 }, /"rules\.x\.segments": 1 \(expected an integer between 2 and 1000\)/],
    [{ limit: 5, window: 1000, segments: 7 }, /"rules\.x\.segments": 7 \(expected a number of segments that divides the window of 1000 ms/],
    [{ limit: 5, window: 1234 }, /"rules\.x\.window": 1234 \(expected a whole number of 10 ms steps for the sliding window's default 10 segments \(e\.g\. 1230 ms\), or "segments" set to a divisor of 1234\)/],
    [{ limit: 5, window: '1m', algorithm: 'gcra', segments: 4 }, /"rules\.x\.segments": 4 .*sliding-window algorithm only, and this rule uses gcra/],
    [{ limit: 5, window: '1m', blockMs: -1 }, /"rules\.x\.blockMs": -1/],
    [{ limit: 5, window: '1m', limt: 3 }, /"rules\.x\.limt": 3 \(expected one of the fields/],
    [{ limit: 2000, window: 1, algorithm: 'fixed-window' }, /"rules\.x\.limit": 2000 \(expected fewer than 1000 per millisecond/],
  ])('refuses %j naming the field and the value', (options, message) => {
    expect(() => defineRule(options as never, 'x', 'rules.x')).toThrow(RateLimitConfigError);
    expect(() => defineRule(options as never, 'x', 'rules.x')).toThrow(message);
  });

  it('refuses a rule name that could break the key layout', () => {
    expect(() => defineRule({ limit: 1, window: 1000 }, 'a:{b}')).toThrow(/name/);
  });

  it('returns a frozen rule', () => {
    expect(Object.isFrozen(defineRule({ limit: 1, window: 1000 }))).toBe(true);
  });
});

describe('parseDuration', () => {
  it.each([
    [250, 250],
    ['500ms', 500],
    ['10s', 10_000],
    ['1.5m', 90_000],
    ['1h', 3_600_000],
    ['1d', 86_400_000],
    // Every unit spelling the `ms` package reads, any case, with or without a space.
    ['1min', 60_000],
    ['2 mins', 120_000],
    ['1 minute', 60_000],
    ['2 hours', 7_200_000],
    ['3 hrs', 10_800_000],
    ['1w', 604_800_000],
    ['2 weeks', 1_209_600_000],
    ['1y', 31_557_600_000],
    ['5 secs', 5_000],
    ['1 second', 1_000],
    ['20 msecs', 20],
    ['3 milliseconds', 3],
    ['1D', 86_400_000],
    ['.5s', 500],
    [' 10s ', 10_000],
  ])('reads %p as %p ms', (input, ms) => {
    expect(parseDuration(input, 'window')).toBe(ms);
  });

  it('refuses a string without a unit, suggesting seconds or milliseconds', () => {
    expect(() => parseDuration('60', 'window')).toThrow('Invalid rate limit option "window": "60" (expected a unit: "60s" for seconds or "60ms" for milliseconds');
  });

  it('names a field even when called without one', () => {
    expect(() => parseDuration('1 fortnight')).toThrow(/option "duration": "1 fortnight"/);
  });

  it('reads "0" as no lockout where zero is allowed', () => {
    expect(parseDuration('0', 'blockMs', { allowZero: true })).toBe(0);
    expect(() => parseDuration('0', 'window')).toThrow(/"window": "0"/);
  });
});

describe('defineRule bounds that keep one decision cheap and exact', () => {
  const DAY_MS = 86_400_000;

  it.each(['sliding-log', 'sliding-window', 'fixed-window', 'token-bucket', 'gcra'] as const)('refuses a %s window past 366 days, naming the maximum', (algorithm) => {
    expect(() => defineRule({ algorithm, limit: 5, window: '200000d' }, 'x', 'rules.x')).toThrow(
      'Invalid rate limit option "rules.x.window": "200000d" (expected a duration of at most 31622400000 ms (366 days)',
    );
  });

  it.each(['sliding-log', 'sliding-window', 'fixed-window', 'token-bucket', 'gcra'] as const)('accepts a %s window of exactly 366 days, and "1y"', (algorithm) => {
    expect(defineRule({ algorithm, limit: 6, window: 366 * DAY_MS }).windowMs).toBe(366 * DAY_MS);
    expect(defineRule({ algorithm, limit: 6, window: '1y' }).windowMs).toBe(31_557_600_000);
  });

  it('refuses a lockout past 366 days, naming the maximum', () => {
    expect(() => defineRule({ limit: 5, window: '1m', blockMs: 366 * DAY_MS + 1 }, 'x', 'rules.x')).toThrow(/"rules\.x\.blockMs": 31622400001 \(expected a duration of 0 or at most 31622400000 ms \(366 days\)/);
    expect(defineRule({ limit: 5, window: '1m', blockMs: '366d' }).blockMs).toBe(366 * DAY_MS);
  });

  it('refuses a sliding-log limit above 1000, naming the maximum and the way out', () => {
    expect(() => defineRule({ algorithm: 'sliding-log', limit: 1_000_000, window: '1h' }, 'x', 'rules.x')).toThrow(
      /"rules\.x\.limit": 1000000 \(expected at most 1000 for the sliding-log algorithm.*sliding-window/,
    );
    expect(defineRule({ algorithm: 'sliding-log', limit: '1000', window: '1h' }).limit).toBe(1000);
    expect(defineRule({ algorithm: 'sliding-window', limit: 1_000_000, window: '1h' }).limit).toBe(1_000_000);
  });
});

describe('the exported bounds', () => {
  it('are the ones defineRule enforces: 366 days of window or lockout, 1000 for a sliding log', () => {
    expect(MAX_WINDOW_MS).toBe(366 * 86_400_000);
    expect(MAX_SLIDING_LOG_LIMIT).toBe(1000);
  });
});
