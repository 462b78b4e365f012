import 'reflect-metadata';
import { BadRequestException, ForbiddenException, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { WsException } from '@nestjs/websockets';
import {
  MemoryStore,
  RateLimit,
  RateLimitExceededException,
  RateLimitGuard,
  RateLimitPolicies,
  RateLimitService,
  SkipRateLimit,
  type MultiDecision,
  type RateLimitModuleOptions,
  type RateLimitPolicy,
  type RateLimitRejection,
  type RateLimitRulesConfig,
  type RuleKey,
} from '../../lib/index.js';
import { validateModuleOptions } from '../../lib/config/module-options.validator.js';
import type { Decision } from '../../lib/interfaces/decision.interface.js';
import type { RateLimitRule } from '../../lib/interfaces/rule.interface.js';
import { ManualClock } from '../support/manual.clock.js';

/** The real memory store, counting the calls that reach it. */
class CountingStore extends MemoryStore {
  calls = 0;
  override consume(key: string, rule: RateLimitRule, cost?: number): Promise<Decision> {
    this.calls++;
    return super.consume(key, rule, cost);
  }
  override consumeAll(entries: readonly RuleKey[], cost?: number): Promise<MultiDecision> {
    this.calls++;
    return super.consumeAll(entries, cost);
  }
}

class ItemsController {
  list() {}
  @RateLimit('1m', 1)
  strict() {}
  @SkipRateLimit()
  health() {}
  @RateLimit({ limit: 5, window: '1m', key: 'header:x-api-key', keyRequired: true })
  keyed() {}
  @RateLimit({ name: 'short', limit: 1, window: '10s' })
  @RateLimit({ name: 'long', limit: 1, window: '1m' })
  twoWindows() {}
}

type GuardClass = new (...args: ConstructorParameters<typeof RateLimitGuard>) => RateLimitGuard;

function setup(rules: RateLimitRulesConfig, options: RateLimitModuleOptions = {}, Guard: GuardClass = RateLimitGuard) {
  const clock = new ManualClock(1_700_000_040_000); // a whole minute, so that reset times are whole seconds
  const store = new CountingStore({ clock: clock.now });
  const policies = new RateLimitPolicies(rules);
  const settings = validateModuleOptions(options);
  const service = new RateLimitService(store, policies, settings);
  return { clock, store, policies, service, guard: new Guard(new Reflector(), service, policies, settings) };
}

class FakeResponse {
  readonly headers: Record<string, string> = {};
  header(name: string, value: string): void {
    this.headers[name] = value;
  }
}

interface FakeRequest {
  ip?: string;
  headers: Record<string, string>;
  res?: FakeResponse;
}

function contextOf(type: string, handler: keyof ItemsController, args: unknown[]): ExecutionContext {
  return {
    getType: () => type,
    getClass: () => ItemsController,
    getHandler: () => ItemsController.prototype[handler],
    getArgs: () => args,
    getArgByIndex: (index: number) => args[index],
    switchToHttp: () => ({ getRequest: () => args[0], getResponse: () => args[1], getNext: () => args[2] }),
    switchToWs: () => ({ getClient: () => args[0], getData: () => args[1], getPattern: () => handler }),
    switchToRpc: () => ({ getData: () => args[0], getContext: () => args[1] }),
  } as unknown as ExecutionContext;
}

const request = (ip = '10.0.0.1', headers: Record<string, string> = {}): FakeRequest => ({ ip, headers });
const http = (handler: keyof ItemsController, req = request(), res = new FakeResponse()) => contextOf('http', handler, [req, res, undefined]);

describe('RateLimitGuard', () => {
  it('lets a context type it cannot read (rpc) through without touching the store', async () => {
    const { guard, store } = setup({ defaultRule: { limit: 1, window: '1m' } });
    for (let i = 0; i < 3; i++) await expect(guard.canActivate(contextOf('rpc', 'list', [{ pattern: 'sum' }, {}]))).resolves.toBe(true);
    expect(store.calls).toBe(0);
  });

  it('lets a route without rules through without touching the store', async () => {
    const { guard, store } = setup({});
    const res = new FakeResponse();
    for (let i = 0; i < 3; i++) await expect(guard.canActivate(http('list', request(), res))).resolves.toBe(true);
    expect(store.calls).toBe(0);
    expect(res.headers).toEqual({});
  });

  it('lets a @SkipRateLimit handler through without touching the store', async () => {
    const { guard, store } = setup({ defaultRule: { limit: 1, window: '1m' } });
    for (let i = 0; i < 3; i++) await expect(guard.canActivate(http('health'))).resolves.toBe(true);
    expect(store.calls).toBe(0);
  });

  it('sets the rate-limit headers through the response header() method', async () => {
    const { guard } = setup({ defaultRule: { limit: 2, window: '1m' } });
    const res = new FakeResponse();
    await guard.canActivate(http('list', request(), res));
    expect(res.headers).toEqual({ 'RateLimit-Policy': '"default";q=2;w=60', RateLimit: '"default";r=1;t=60' });
  });

  it('sets Retry-After and throws RateLimitExceededException with the 429 body past the limit', async () => {
    const { guard } = setup({ defaultRule: { limit: 1, window: '1m' } });
    await guard.canActivate(http('list'));
    const res = new FakeResponse();
    const refusal = guard.canActivate(http('list', request(), res));
    await expect(refusal).rejects.toBeInstanceOf(RateLimitExceededException);
    await expect(refusal).rejects.toMatchObject({ response: { statusCode: 429, message: 'Too Many Requests', retryAfter: 60 } });
    expect(res.headers).toMatchObject({ 'Retry-After': '60', RateLimit: '"default";r=0;t=60' });
  });

  it('sets no headers on allowed requests when headers is false', async () => {
    const { guard } = setup({ defaultRule: { limit: 2, window: '1m' } }, { headers: false });
    const res = new FakeResponse();
    await guard.canActivate(http('list', request(), res));
    expect(res.headers).toEqual({});
  });

  it('lets requests the skip option picks through without touching the store', async () => {
    const seen: ExecutionContext[] = [];
    const skip = (context: ExecutionContext) => (seen.push(context), context.switchToHttp().getRequest<FakeRequest>().headers['x-internal'] === 'yes');
    const { guard, store } = setup({ defaultRule: { limit: 1, window: '1m' } }, { skip });
    const internal = http('list', request('10.0.0.1', { 'x-internal': 'yes' }));
    for (let i = 0; i < 3; i++) await expect(guard.canActivate(internal)).resolves.toBe(true);
    expect(store.calls).toBe(0);
    expect(seen[0]).toBe(internal);
    await expect(guard.canActivate(http('list'))).resolves.toBe(true);
    await expect(guard.canActivate(http('list'))).rejects.toBeInstanceOf(RateLimitExceededException);
  });

  it('counts by the tracker an overridden getTracker returns', async () => {
    class HeaderTrackerGuard extends RateLimitGuard {
      protected override getTracker(req: { headers?: Record<string, string | string[] | undefined> }): string {
        return String(req.headers?.['x-client']);
      }
    }
    const { guard, service } = setup({ defaultRule: { limit: 1, window: '1m' } }, {}, HeaderTrackerGuard);
    await guard.canActivate(http('list', request('10.0.0.1', { 'x-client': 'a' })));
    // Another IP, the same client: refused.
    await expect(guard.canActivate(http('list', request('10.0.0.2', { 'x-client': 'a' })))).rejects.toBeInstanceOf(RateLimitExceededException);
    await expect(guard.canActivate(http('list', request('10.0.0.1', { 'x-client': 'b' })))).resolves.toBe(true);
    expect((await service.peek('ItemsController.list|ip:a', { limit: 1, window: '1m' })).allowed).toBe(false);
  });

  it('stores under the key an overridden generateKey returns', async () => {
    class TenantKeyGuard extends RateLimitGuard {
      protected override generateKey(_context: ExecutionContext, tracker: string, policy: RateLimitPolicy): string {
        return `tenant-1|${policy.rule.name}|${tracker}`;
      }
    }
    const { guard, service } = setup({ defaultRule: { limit: 1, window: '1m' } }, {}, TenantKeyGuard);
    await guard.canActivate(http('list'));
    expect((await service.peek('tenant-1|default|ip:10.0.0.1', { limit: 1, window: '1m' })).allowed).toBe(false);
    expect((await service.peek('ItemsController.list|ip:10.0.0.1', { limit: 1, window: '1m' })).allowed).toBe(true);
    // The key is per tenant, not per route: another handler shares the budget.
    await expect(guard.canActivate(http('strict'))).rejects.toBeInstanceOf(RateLimitExceededException);
  });

  it('throws what an overridden throwRateLimitException throws, given the refusal', async () => {
    const rejections: RateLimitRejection[] = [];
    class ForbiddingGuard extends RateLimitGuard {
      protected override async throwRateLimitException(_context: ExecutionContext, rejection: RateLimitRejection): Promise<never> {
        rejections.push(rejection);
        throw new ForbiddenException('slow down');
      }
    }
    const { guard } = setup({ defaultRule: { limit: 1, window: '1m' } }, {}, ForbiddingGuard);
    await guard.canActivate(http('list'));
    await expect(guard.canActivate(http('list'))).rejects.toThrow(ForbiddenException);
    expect(rejections).toHaveLength(1);
    expect(rejections[0]).toMatchObject({ retryAfterMs: 60_000, result: { allowed: false } });
    expect(rejections[0].outcomes.map((o) => [o.rule.name, o.decision.allowed])).toEqual([['default', false]]);
  });

  it('passes errorMessage the refusing rule the client waits longest for', async () => {
    const errorMessage = (_context: ExecutionContext, decision: Decision) => `retry in ${Math.ceil(decision.retryAfterMs / 1000)}s`;
    const { guard } = setup({}, { errorMessage });
    await guard.canActivate(http('twoWindows'));
    await expect(guard.canActivate(http('twoWindows'))).rejects.toMatchObject({ response: { message: 'retry in 60s', retryAfter: 60 } });
  });

  it('answers 400 without touching the store when a required key is missing', async () => {
    const { guard, store } = setup({});
    await expect(guard.canActivate(http('keyed'))).rejects.toBeInstanceOf(BadRequestException);
    await expect(guard.canActivate(http('keyed'))).rejects.toThrow('Rate limit key "header:x-api-key" is missing from the request');
    expect(store.calls).toBe(0);
    await expect(guard.canActivate(http('keyed', request('10.0.0.1', { 'x-api-key': 'k1' })))).resolves.toBe(true);
    expect(store.calls).toBe(1);
  });

  it('applies the rules of policies.replaceFromConfig to the next request on a cached route', async () => {
    const { guard, policies } = setup({ defaultRule: { limit: 2, window: '1m' } });
    const before = new FakeResponse();
    await guard.canActivate(http('list', request('10.0.0.1'), before));
    expect(before.headers['RateLimit-Policy']).toBe('"default";q=2;w=60');
    policies.replaceFromConfig({ defaultRule: { limit: 5, window: '1m' } }, 'rateLimit');
    const after = new FakeResponse();
    await guard.canActivate(http('list', request('10.0.0.2'), after));
    expect(after.headers['RateLimit-Policy']).toBe('"default";q=5;w=60');
  });

  it('reads the request and response of a graphql context from the third argument', async () => {
    const { guard } = setup({ defaultRule: { limit: 1, window: '1m' } });
    const res = new FakeResponse();
    const gql = (req: FakeRequest) => contextOf('graphql', 'list', [{}, {}, { req, res }, {}]);
    await guard.canActivate(gql(request('10.0.0.1')));
    expect(res.headers['RateLimit']).toBe('"default";r=0;t=60');
    await expect(guard.canActivate(gql(request('10.0.0.1')))).rejects.toBeInstanceOf(RateLimitExceededException);
    await expect(guard.canActivate(gql(request('10.0.0.2')))).resolves.toBe(true);
  });

  it("falls back to Express's req.res when the graphql context holds only req", async () => {
    const { guard } = setup({ defaultRule: { limit: 1, window: '1m' } });
    const req = { ...request(), res: new FakeResponse() };
    await guard.canActivate(contextOf('graphql', 'list', [{}, {}, { req }, {}]));
    expect(req.res.headers['RateLimit-Policy']).toBe('"default";q=1;w=60');
  });

  it("throws a WsException with the 429 body on a ws context, keyed by the ws client's address", async () => {
    const { guard } = setup({ defaultRule: { limit: 1, window: '1m' } });
    const ws = (remoteAddress: string) => contextOf('ws', 'list', [{ readyState: 1, _socket: { remoteAddress } }, { n: 1 }]);
    await expect(guard.canActivate(ws('::ffff:10.0.0.1'))).resolves.toBe(true);
    const refusal = guard.canActivate(ws('10.0.0.1'));
    await expect(refusal).rejects.toBeInstanceOf(WsException);
    await expect(refusal).rejects.toMatchObject({ error: { statusCode: 429, message: 'Too Many Requests', retryAfter: 60 } });
    await expect(guard.canActivate(ws('10.0.0.2'))).resolves.toBe(true);
  });
});
