import { RateLimit, RateLimitConfigError, validateRulesConfig } from '../../lib/index.js';

/** `refusedEvents` (README, "Recipe: microservices"): checked where it is written, the error naming the option and the value. */
describe('the refusedEvents rule option', () => {
  it.each(['drop', 'redeliver', 'reject'] as const)('accepts %s on a default rule and keeps it on the compiled rule', (refusedEvents) => {
    const { defaults } = validateRulesConfig({ defaultRule: { limit: 1, window: '1m', refusedEvents } });
    expect(defaults[0].refusedEvents).toBe(refusedEvents);
  });

  it('leaves a rule without it with none (the guard then drops)', () => {
    const { named } = validateRulesConfig({ rules: { audit: { limit: 1, window: '1m' } } });
    expect(named.get('audit')!.refusedEvents).toBeUndefined();
  });

  it('refuses another value at start-up, naming the option, the value and what is allowed', () => {
    const compile = () => validateRulesConfig({ rules: { audit: { limit: 1, window: '1m', refusedEvents: 'requeue' as never } } });
    expect(compile).toThrow(RateLimitConfigError);
    expect(compile).toThrow('Invalid rate limit option "rules.audit.refusedEvents": "requeue" (expected "drop", "redeliver" or "reject")');
  });

  it('refuses another value in @RateLimit when the class is declared, naming the handler', () => {
    const declare = () => {
      class AuditController {
        @RateLimit({ name: 'audit', refusedEvents: 'later' as never })
        audit() {}
      }
      return AuditController;
    };
    expect(declare).toThrow('Invalid rate limit option "@RateLimit on AuditController.audit.refusedEvents": "later" (expected "drop", "redeliver" or "reject")');
  });
});
