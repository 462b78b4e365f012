import type { ExecutionContext } from '@nestjs/common';
import { compilePolicy, compileRoutePolicy } from '../../lib/config/policy.compiler.js';
import { RESOLVED_POLICIES_KEPT, RateLimitResolveError } from '../../lib/config/resolvable-policy.compiler.js';
import { RateLimitConfigError, RateLimitPolicies, RateLimitService, MemoryStore } from '../../lib/index.js';
import { validateModuleOptions } from '../../lib/config/module-options.validator.js';

/** A context whose request carries an `x-plan` header. */
const contextOf = (plan: string): ExecutionContext =>
  ({ switchToHttp: () => ({ getRequest: () => ({ headers: { 'x-plan': plan } }) }) }) as unknown as ExecutionContext;
const planOf = (context: ExecutionContext) => context.switchToHttp().getRequest<{ headers: Record<string, string> }>().headers['x-plan'];

describe('request-dependent rules', () => {
  const tiered = { limit: async (c: ExecutionContext) => (planOf(c) === 'pro' ? 5 : 2), window: '1m' };

  it('resolves a limit given as an async function per request', async () => {
    const policy = compileRoutePolicy(tiered, 'tiered', 'rules.tiered');
    expect((await policy.resolve!(contextOf('pro'))).rule).toMatchObject({ name: 'tiered', limit: 5, windowMs: 60_000 });
    expect((await policy.resolve!(contextOf('free'))).rule.limit).toBe(2);
  });

  it('resolves window, blockMs and cost given as sync functions', async () => {
    const policy = compileRoutePolicy({ limit: 10, window: () => '10s', blockMs: () => 5000, cost: () => 3 }, 'r', 'r');
    const resolved = await policy.resolve!(contextOf('free'));
    expect([resolved.rule.windowMs, resolved.rule.blockMs, resolved.cost]).toEqual([10_000, 5000, 3]);
  });

  it('validates the same resolved values once, returning the policy it compiled for them', async () => {
    const policy = compileRoutePolicy(tiered, 'tiered', 'rules.tiered');
    expect(await policy.resolve!(contextOf('pro'))).toBe(await policy.resolve!(contextOf('pro')));
  });

  it(`keeps at most ${RESOLVED_POLICIES_KEPT} resolved policies, dropping the oldest`, async () => {
    let n = 0;
    const policy = compileRoutePolicy({ limit: () => ++n, window: '1m' }, 'r', 'r');
    const first = await policy.resolve!(contextOf('x'));
    for (let i = 0; i < RESOLVED_POLICIES_KEPT; i++) await policy.resolve!(contextOf('x'));
    n = 0;
    expect(await policy.resolve!(contextOf('x'))).not.toBe(first);
    expect((await policy.resolve!(contextOf('x'))).rule.limit).toBe(2);
  });

  it('refuses an invalid resolved value as a static one is refused, naming the rule, the field and the value', async () => {
    const policy = compileRoutePolicy({ limit: () => 'many', window: '1m' }, 'tiered', 'rules.tiered');
    await expect(policy.resolve!(contextOf('free'))).rejects.toThrow(expect.objectContaining({ field: 'rules.tiered.limit', value: 'many' }));
  });

  it('never caches a resolved value that failed: undefined and null are told apart', async () => {
    let cost: unknown = undefined;
    const policy = compileRoutePolicy({ limit: 5, window: '1m', cost: () => cost as number }, 'r', 'r');
    expect((await policy.resolve!(contextOf('x'))).cost).toBe(1);
    cost = null;
    await expect(policy.resolve!(contextOf('x'))).rejects.toBeInstanceOf(RateLimitConfigError);
  });

  it('reports a resolver that throws, naming the field', async () => {
    const policy = compileRoutePolicy({ limit: () => { throw new Error('plan service down'); }, window: '1m' }, 'tiered', 'rules.tiered');
    await expect(policy.resolve!(contextOf('free'))).rejects.toThrow(RateLimitResolveError);
    await expect(policy.resolve!(contextOf('free'))).rejects.toThrow('"rules.tiered.limit": its function threw Error: plan service down');
  });

  it('refuses at start-up what no request can fix: a bad algorithm or a bad static window', () => {
    expect(() => compileRoutePolicy({ ...tiered, algorithm: 'slidng' as never }, 't', 'rules.t')).toThrow(expect.objectContaining({ field: 'rules.t.algorithm' }));
    expect(() => compileRoutePolicy({ ...tiered, window: 'soon' }, 't', 'rules.t')).toThrow(expect.objectContaining({ field: 'rules.t.window' }));
  });

  it('leaves to the request a combination that depends on a resolved value (segments of a resolved window)', () => {
    expect(() => compileRoutePolicy({ limit: 5, window: () => '7s', segments: 7 }, 't', 't')).not.toThrow();
  });

  it('refuses a function of the request in compilePolicy, the service\'s path, naming the field', () => {
    expect(() => compilePolicy(tiered, 'tiered', 'rule')).toThrow(expect.objectContaining({ field: 'rule.limit' }));
  });

  it('refuses a request-dependent named rule in RateLimitService, which has no request, naming the rule', async () => {
    const policies = new RateLimitPolicies({ rules: { tiered } });
    const service = new RateLimitService(new MemoryStore(), policies, validateModuleOptions({}));
    await expect(service.consume('k', 'tiered')).rejects.toThrow(expect.objectContaining({ field: 'rules.tiered' }));
    await expect(service.consume('k', 'tiered')).rejects.toThrow(/only RateLimitGuard resolves functions of the request/);
  });
});
