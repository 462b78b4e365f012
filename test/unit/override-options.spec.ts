import { defineRule, MemoryStore, RateLimitConfigError, RateLimitPolicies, RateLimitService } from '../../lib/index.js';
import { validateModuleOptions } from '../../lib/config/module-options.validator.js';

function service(): RateLimitService {
  const rules = {
    api: { limit: 2, window: '1m', algorithm: 'fixed-window' as const, overrides: true },
    log: { limit: 2, window: '1m', algorithm: 'sliding-log' as const, overrides: true },
    bucket: { limit: 2, window: '1s', algorithm: 'token-bucket' as const, refill: 3, overrides: 'true' as const },
    plain: { limit: 2, window: '1m' },
  };
  return new RateLimitService(new MemoryStore(), new RateLimitPolicies({ rules }), validateModuleOptions({}));
}

/** The RateLimitConfigError a call rejects with: its field and message. */
async function refusal(call: Promise<unknown>): Promise<{ field: string; message: string }> {
  const error = await call.then(() => undefined, (e: unknown) => e);
  expect(error).toBeInstanceOf(RateLimitConfigError);
  return error as RateLimitConfigError;
}

describe('the overrides rule option', () => {
  it('is absent from a rule that does not ask for it', () => {
    expect(defineRule({ limit: 1, window: '1m' }).overrides).toBeUndefined();
    expect(defineRule({ limit: 1, window: '1m', overrides: 'false' }).overrides).toBeUndefined();
  });

  it('accepts true, and its string from an env var', () => {
    expect(defineRule({ limit: 1, window: '1m', overrides: 'true' }).overrides).toBe(true);
  });

  it('refuses a value that is not a boolean, naming the option', () => {
    expect(() => defineRule({ limit: 1, window: '1m', overrides: 'yes' as never }, 'api')).toThrow('Invalid rate limit option "api.overrides": "yes" (expected true or false)');
  });

  it('refuses a GCRA or concurrency rule, whose limit an override cannot stand for', () => {
    expect(() => defineRule({ limit: 1, window: '1m', algorithm: 'gcra', overrides: true }, 'g')).toThrow(/"g.overrides".*the sliding-log, sliding-window, fixed-window and token-bucket algorithms, and this rule uses gcra/);
    expect(() => defineRule({ limit: 1, algorithm: 'concurrency', overrides: true }, 'c')).toThrow(/"c.overrides"/);
  });
});

describe('RateLimitService.overrides.set validation', () => {
  it('refuses a rule without overrides: true', async () => {
    expect((await refusal(service().overrides.set('plain', 'k', { limit: 5, ttlMs: 1000 }))).field).toBe('rules.plain.overrides');
  });

  it('refuses an unknown rule name', async () => {
    expect((await refusal(service().overrides.set('nope', 'k', { limit: 5, ttlMs: 1000 }))).field).toBe('rule');
  });

  it('refuses both limit and block, and neither', async () => {
    expect((await refusal(service().overrides.set('api', 'k', { limit: 5, block: true, ttlMs: 1000 }))).message).toMatch(/"override.limit".*exactly one of "limit" \(a positive integer\) and "block: true", not both/);
    expect((await refusal(service().overrides.set('api', 'k', { ttlMs: 1000 }))).field).toBe('override.limit');
  });

  it('refuses block: false', async () => {
    expect((await refusal(service().overrides.set('api', 'k', { block: false, ttlMs: 1000 }))).field).toBe('override.block');
  });

  it.each([0, -1, 1.5, '10'])('refuses the limit %p', async (limit) => {
    expect((await refusal(service().overrides.set('api', 'k', { limit: limit as number, ttlMs: 1000 }))).field).toBe('override.limit');
  });

  it('refuses a limit past what the rule algorithm can count', async () => {
    expect((await refusal(service().overrides.set('log', 'k', { limit: 1001, ttlMs: 1000 }))).message).toMatch(/"override.limit": 1001 \(expected an integer from 1 to 1000, the most the sliding-log rule "log" can count\)/);
    expect((await refusal(service().overrides.set('api', 'k', { limit: 60_000_000, ttlMs: 1000 }))).message).toMatch(/from 1 to 59999999/);
  });

  it.each([0, -5, 'soon', 400 * 86_400_000, undefined])('refuses the ttlMs %p', async (ttlMs) => {
    expect((await refusal(service().overrides.set('api', 'k', { limit: 5, ttlMs: ttlMs as number }))).field).toBe('override.ttlMs');
  });

  it('refuses a reason longer than 200 characters, and an unknown field', async () => {
    expect((await refusal(service().overrides.set('api', 'k', { limit: 5, ttlMs: 1000, reason: 'x'.repeat(201) }))).field).toBe('override.reason');
    expect((await refusal(service().overrides.set('api', 'k', { limit: 5, ttlMs: 1000, until: 5 } as never))).field).toBe('override.until');
  });

  it('refuses an empty key', async () => {
    expect((await refusal(service().overrides.set('api', '', { limit: 5, ttlMs: 1000 }))).field).toBe('key');
  });

  it('accepts a duration string and a token-bucket capacity', async () => {
    await expect(service().overrides.set('bucket', 'k', { limit: 10, ttlMs: '2h' })).resolves.toMatchObject({ rule: 'bucket', key: 'k', limit: 10, block: false });
  });
});
