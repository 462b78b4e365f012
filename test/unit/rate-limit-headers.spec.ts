import { defineRule, type Decision } from '../../lib/index.js';
import { mostRestrictive, rateLimitHeaders, retryAfterMs, type RuleOutcome } from '../../lib/http/rate-limit.headers.js';

const minute = defineRule({ limit: 10, window: '1m' }, 'minute');
const hour = defineRule({ limit: 100, window: '1h', segments: 60 }, 'hour');
const decision = (d: Partial<Decision>): Decision => ({ allowed: true, limit: 10, remaining: 5, resetAfterMs: 1_500, retryAfterMs: 0, ...d });

describe('rateLimitHeaders', () => {
  const allowed: RuleOutcome[] = [
    { rule: minute, decision: decision({ limit: 10, remaining: 7, resetAfterMs: 30_001 }) },
    { rule: hour, decision: decision({ limit: 100, remaining: 3, resetAfterMs: 3_000_000 }) },
  ];

  it('lists every rule in the draft fields, in seconds rounded up', () => {
    expect(rateLimitHeaders('draft', allowed, true)).toEqual([
      ['RateLimit-Policy', '"minute";q=10;w=60, "hour";q=100;w=3600'],
      ['RateLimit', '"minute";r=7;t=31, "hour";r=3;t=3000'],
    ]);
  });

  it('describes the rule with the least left in the legacy fields', () => {
    expect(rateLimitHeaders('legacy', allowed, true)).toEqual([
      ['X-RateLimit-Limit', '100'],
      ['X-RateLimit-Remaining', '3'],
      ['X-RateLimit-Reset', '3000'],
    ]);
  });

  it('sends Retry-After on a refusal even with headers off', () => {
    const refused: RuleOutcome[] = [{ rule: minute, decision: decision({ allowed: false, remaining: 0, retryAfterMs: 2_001 }) }];
    expect(rateLimitHeaders(false, refused, false)).toEqual([['Retry-After', '3']]);
  });

  it('gives both sets of fields in "both" mode', () => {
    expect(rateLimitHeaders('both', allowed, true).map(([name]) => name)).toEqual([
      'RateLimit-Policy', 'RateLimit', 'X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset',
    ]);
  });
});

describe('rateLimitHeaders in "per-rule" mode', () => {
  const byDefault = defineRule({ limit: 3, window: '1m' }, 'default');

  it('gives each rule its X-RateLimit fields, suffixed with its name except the default', () => {
    const outcomes: RuleOutcome[] = [{ rule: byDefault, decision: decision({ limit: 3, remaining: 2, resetAfterMs: 60_000 }) }, allowedMinute()];
    expect(rateLimitHeaders('per-rule', outcomes, true)).toEqual([
      ['X-RateLimit-Limit', '3'],
      ['X-RateLimit-Remaining', '2'],
      ['X-RateLimit-Reset', '60'],
      ['X-RateLimit-Limit-minute', '10'],
      ['X-RateLimit-Remaining-minute', '7'],
      ['X-RateLimit-Reset-minute', '31'],
    ]);
  });

  it('adds Retry-After-<rule> for each refusing rule and Retry-After with the longest wait', () => {
    const outcomes: RuleOutcome[] = [
      { rule: minute, decision: decision({ allowed: false, remaining: 0, retryAfterMs: 2_001 }) },
      { rule: hour, decision: decision({ allowed: false, limit: 100, remaining: 0, retryAfterMs: 30_000 }) },
    ];
    const headers = rateLimitHeaders('per-rule', outcomes, false).filter(([name]) => name.startsWith('Retry-After'));
    expect(headers).toEqual([['Retry-After-minute', '3'], ['Retry-After-hour', '30'], ['Retry-After', '30']]);
  });

  function allowedMinute(): RuleOutcome {
    return { rule: minute, decision: decision({ limit: 10, remaining: 7, resetAfterMs: 30_001 }) };
  }
});

describe('mostRestrictive and retryAfterMs', () => {
  it('on a refusal, pick the refusing rule with the longest wait', () => {
    const outcomes: RuleOutcome[] = [
      { rule: minute, decision: decision({ allowed: false, remaining: 0, retryAfterMs: 5_000 }) },
      { rule: hour, decision: decision({ allowed: false, remaining: 0, retryAfterMs: 60_000 }) },
    ];
    expect(mostRestrictive(outcomes, false).rule).toBe(hour);
    expect(retryAfterMs(outcomes)).toBe(60_000);
  });

  it('ignores rules that would have admitted when computing the wait', () => {
    const outcomes: RuleOutcome[] = [
      { rule: minute, decision: decision({ allowed: true, remaining: 0, resetAfterMs: 90_000 }) },
      { rule: hour, decision: decision({ allowed: false, remaining: 0, retryAfterMs: 1_000 }) },
    ];
    expect(mostRestrictive(outcomes, false).rule).toBe(hour);
    expect(retryAfterMs(outcomes)).toBe(1_000);
  });
});
