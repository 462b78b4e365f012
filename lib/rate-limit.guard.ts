import { BadRequestException, Inject, Injectable, InternalServerErrorException, Logger, Optional, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { RateLimitPolicies } from './config/rate-limit.policies.js';
import type { RateLimitSettings } from './interfaces/rate-limit-settings.interface.js';
import type { RateLimitEntry } from './decorators/rate-limit.decorator.js';
import { resolveRoutePolicies } from './decorators/route-policies.resolver.js';
import type { SkipRateLimitMetadata } from './decorators/skip-rate-limit.decorator.js';
import { clientIp, groupIp } from './http/client-ip.js';
import type { HttpRequestLike } from './interfaces/http-request.interface.js';
import { requestResponseOf, setHeaders, type RequestResponse } from './http/execution-context.adapter.js';
import { warnIfForwardedForIgnored } from './http/forwarded-for.warning.js';
import { mostRestrictive, rateLimitHeaders, retryAfterMs, shownOutcomes, type RuleOutcome } from './http/rate-limit.headers.js';
import { interceptorRunsFor } from './http/rate-limit.interceptor.js';
import { resolveRequestKey, type KeyedRequest } from './http/request-key.resolver.js';
import { routeName } from './http/route.key.js';
import { decideHoldingLeases, hasLeaseRules } from './http/request-lease.binder.js';
import { userAgentMatches } from './http/user-agent.matcher.js';
import type { MultiDecision } from './interfaces/decision.interface.js';
import type { RateLimitPolicy } from './interfaces/rate-limit-policy.interface.js';
import type { RuleKey } from './interfaces/store.interface.js';
import { RATE_LIMIT_GLOBAL_INTERCEPTOR, RATE_LIMIT_METADATA, RATE_LIMIT_SETTINGS, SKIP_RATE_LIMIT_METADATA } from './interfaces/rate-limit.constants.js';
import { errorDetail, RateLimitExceededException } from './http/rate-limit.exception.js';
import { RateLimitService } from './rate-limit.service.js';
import { rpcRequestOf, type RpcRequest } from './rpc/rpc-context.reader.js';
import { rpcRateLimitRefusal, untrackedRpcRefusal } from './rpc/rpc-refusal.js';
import { resolveRpcTrackers } from './rpc/rpc-tracker.resolver.js';

/** What `throwRateLimitException` gets to build its error from. */
export interface RateLimitRejection {
  readonly outcomes: readonly RuleOutcome[];
  readonly result: MultiDecision;
  /** Milliseconds before the same request can pass. */
  readonly retryAfterMs: number;
  /** The rule of each outcome with how the guard applied it (`refusedEvents` on microservices), in the same order. */
  readonly policies?: readonly RateLimitPolicy[];
}

interface RouteCache {
  readonly version: number;
  readonly policies: readonly RateLimitPolicy[];
  readonly route: string;
  /** Whether a rule is skipped or resolved per request (`skipIf`, `ignoreUserAgents`, functions of the request). */
  readonly perRequest: boolean;
  /** Whether RateLimitInterceptor runs for the handler, to hold the leases of a call without an HTTP response. */
  readonly intercepted: boolean;
  /** The names of the route's rules that are the module's default ones (not redeclared): on RPC they need a tracker. */
  readonly moduleDefaults: ReadonlySet<string>;
}

/**
 * Applies the rules of the route (module default, `@RateLimit` on the class and the handler, minus
 * `@SkipRateLimit`) to each request, all-or-nothing in one store call; sets the rate-limit headers; throws
 * `RateLimitExceededException` (429) on a refusal. Extend it and override the protected hooks to customise.
 */
@Injectable()
export class RateLimitGuard implements CanActivate {
  private readonly routes = new WeakMap<object, Map<object, RouteCache>>();
  private readonly logger = new Logger('RateLimit');
  /** True when `globalInterceptor` registered RateLimitInterceptor; a property, so that subclasses' constructors stay as they are. */
  @Optional() @Inject(RATE_LIMIT_GLOBAL_INTERCEPTOR) private readonly globalInterceptor?: boolean;

  constructor(
    protected readonly reflector: Reflector,
    protected readonly service: RateLimitService,
    protected readonly policies: RateLimitPolicies,
    @Inject(RATE_LIMIT_SETTINGS) protected readonly settings: RateLimitSettings,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    // The rules' version as read here: a reload while the trackers resolve must not let the block cache keep a refusal.
    const rulesVersion = this.policies.version;
    const route = this.route(context);
    if (route.policies.length === 0) return true;
    const { request, response } = this.getRequestResponse(context);
    if (!request) return true;
    if (this.settings.skip && (await this.settings.skip(context))) return true;
    if (this.settings.ignoreUserAgents && userAgentMatches(request, this.settings.ignoreUserAgents)) return true;
    // A static route keeps the zero-cost path: its compiled rules as they are.
    let policies = route.perRequest ? await this.requestPolicies(route.policies, context, request) : route.policies;
    if (policies.length === 0) return true;
    // A microservice message: each rule's tracker read from the message, or none (rpc/rpc-tracker.resolver.ts).
    let trackers: readonly string[] | undefined;
    if (context.getType<string>() === 'rpc') {
      const found = await resolveRpcTrackers(policies, request as unknown as RpcRequest, context, route.moduleDefaults, this.settings);
      if ('untracked' in found) throw await untrackedRpcRefusal(context, found.untracked, route.route, this.logger);
      ({ policies, trackers } = found);
      if (policies.length === 0) return true;
    }

    const entries: RuleKey[] = new Array(policies.length);
    let ip: string | undefined;
    let shadowed = false;
    for (let i = 0; i < policies.length; i++) {
      const policy = policies[i];
      let tracker = trackers?.[i];
      // Before the client IP, in the tracker of a keyed rule whose key the request lacks.
      let ipScope = '';
      if (tracker === undefined && policy.key.kind !== 'ip') {
        const resolved = resolveRequestKey(policy.key, request as KeyedRequest, context);
        // Only function keys can be asynchronous; the others need no turn of the event loop.
        const value = resolved instanceof Promise ? await resolved : resolved;
        if (value !== undefined) tracker = `${policy.key.label}:${value}`;
        else if (policy.keyRequired) throw new BadRequestException(`Rate limit key "${policy.key.label}" is missing from the request`);
        // Never one shared bucket for everyone without the key: per client IP, apart from the keyed trackers.
        else ipScope = `no-${policy.key.label}:`;
      }
      if (tracker === undefined) {
        if (ip === undefined) {
          // Awaited only when the hook is asynchronous: the default one answers at once, on every request.
          const own = this.getTracker(request, context);
          ip = this.checkedTracker(own instanceof Promise ? await own : own);
        }
        tracker = `${ipScope}ip:${ip}`;
      }
      const key = this.generateKey(context, tracker, policy);
      if (typeof key !== 'string' || key === '') this.refuseUndecidable(`generateKey returned ${JSON.stringify(key)} for rule "${policy.name}", not a non-empty string`);
      if (this.policies.isShadow(policy)) {
        entries[i] = { key, rule: policy.rule, cost: policy.cost, shadow: true };
        shadowed = true;
      } else {
        entries[i] = { key, rule: policy.rule, cost: policy.cost };
      }
    }

    // Concurrency rules hold a lease for the request, released when it ends (http/request-lease.binder.ts); without
    // an HTTP response it is taken once every guard admitted, and a lease not free is refused here as well.
    const result = hasLeaseRules(entries)
      ? await decideHoldingLeases(
          this.service,
          entries,
          rulesVersion,
          context,
          response,
          (refused) => this.conclude(context, policies, shadowed, response, refused),
          () => this.checkLeaseHolder(route),
        )
      : await this.service.decide(entries, rulesVersion);
    return this.conclude(context, policies, shadowed, response, result);
  }

  /** Sets the rate-limit headers of the request's decision, and throws its refusal when it was refused. */
  private conclude(context: ExecutionContext, policies: readonly RateLimitPolicy[], shadowed: boolean, response: unknown, result: MultiDecision): true | Promise<true> {
    const outcomes = result.decisions.map((decision, i): RuleOutcome => ({ rule: policies[i].rule, decision, cost: policies[i].cost }));
    // Shadow rules stay out of the headers unless asked for (the exception filter's 429 leaves them out alike).
    const shown = shadowed ? shownOutcomes(outcomes, this.settings.shadowHeaders) : outcomes;
    if (response && shown.length > 0 && (this.settings.headers !== false || !result.allowed)) {
      setHeaders(response, rateLimitHeaders(this.settings.headers, shown, result.allowed));
    }
    if (!result.allowed) return this.refuse(context, { outcomes, result, retryAfterMs: retryAfterMs(outcomes), policies });
    return true;
  }

  /** Throws the refusal; an override of `throwRateLimitException` that returns instead admits the request, as it always did. */
  private async refuse(context: ExecutionContext, rejection: RateLimitRejection): Promise<true> {
    await this.throwRateLimitException(context, rejection);
    return true;
  }

  /** The request (and response) to limit; return `{}` to let a context through unlimited. A microservice message reads as a request (rpc/rpc-context.reader.ts). */
  protected getRequestResponse(context: ExecutionContext): RequestResponse {
    if (context.getType<string>() === 'rpc') return { request: rpcRequestOf(context) };
    return requestResponseOf(context);
  }

  /**
   * The client identity for `key: 'ip'` and for the fallback of unresolvable keys: the module's `getTracker`
   * option when given, else the client IP, IPv6 per subnet.
   */
  protected getTracker(request: HttpRequestLike, context: ExecutionContext): string | Promise<string> {
    if (this.settings.getTracker) return this.settings.getTracker(request as HttpRequestLike & Record<string, unknown>, context);
    if (this.settings.trustProxy === undefined) warnIfForwardedForIgnored(request);
    const ip = clientIp(request, this.settings.trustProxy);
    if (ip) return groupIp(ip, this.settings.ipv6Subnet);
    // One bucket for every such request would let one client spend everyone's budget.
    this.refuseUndecidable(
      'the request has no client IP (an app listening on a unix socket, or a proxy it does not trust): set trustProxy to the proxy that forwards to it, or a getTracker that identifies the client',
    );
  }

  /**
   * The store key of a tracker under a rule: per route unless the rule is shared. The route is
   * `Controller.handler`, behind the controller's path when it has one (`v2/users:UsersController.list`),
   * so that two controllers of one class name in different modules keep apart. The module's `generateKey`
   * option, when given, decides instead.
   */
  protected generateKey(context: ExecutionContext, tracker: string, policy: RateLimitPolicy): string {
    if (this.settings.generateKey) return this.settings.generateKey(context, tracker, policy.name);
    // As routeKey() (http/route.key.ts) computes it, from the route's cached name.
    return policy.shared ? tracker : `${this.route(context).route}|${tracker}`;
  }

  /**
   * Throws the refusal: a 429 `RateLimitExceededException`, a `WsException` with the same body on WebSockets, or
   * on microservices an `RpcException` (RESOURCE_EXHAUSTED on gRPC) or, for an event, `RateLimitEventRefused`.
   */
  protected async throwRateLimitException(context: ExecutionContext, rejection: RateLimitRejection): Promise<never> {
    // The rule the client waits longest for, as Retry-After and the legacy headers report it.
    const refused = mostRestrictive(rejection.outcomes, false);
    const message = typeof this.settings.errorMessage === 'function' ? this.settings.errorMessage(context, errorDetail(refused)) : this.settings.errorMessage;
    const exception = new RateLimitExceededException(message, rejection.retryAfterMs, rejection.result.decisions, rejection.outcomes.map((o) => o.rule));
    if (context.getType<string>() === 'ws') {
      // Only WsException reaches a WebSocket client; the package exists whenever a gateway does.
      const { WsException } = await import('@nestjs/websockets');
      throw new WsException(exception.getResponse() as object);
    }
    if (context.getType<string>() === 'rpc') {
      const detail = errorDetail(refused);
      const policy = rejection.policies?.find((p) => p.name === refused.rule.name);
      const error = { statusCode: 429, message: exception.message, retryAfter: Math.ceil(rejection.retryAfterMs / 1000), retryAfterMs: rejection.retryAfterMs, rule: detail.rule, limit: detail.limit } as const;
      throw await rpcRateLimitRefusal(context, error, policy?.refusedEvents);
    }
    throw exception;
  }

  /** The route's rules this request is subject to, each with its values: skipped rules dropped, functions resolved. */
  private async requestPolicies(policies: readonly RateLimitPolicy[], context: ExecutionContext, request: HttpRequestLike): Promise<RateLimitPolicy[]> {
    const applied: RateLimitPolicy[] = [];
    for (const policy of policies) {
      if (policy.ignoreUserAgents && userAgentMatches(request, policy.ignoreUserAgents)) continue;
      if (policy.skipIf && (await policy.skipIf(context))) continue;
      if (!policy.resolve) {
        applied.push(policy);
        continue;
      }
      try {
        applied.push(await policy.resolve(context));
      } catch (error) {
        this.refuseUndecidable(`rule "${policy.name}" could not be resolved: ${(error as Error).message}`);
      }
    }
    return applied;
  }

  /** The tracker hook's answer, which must be a non-empty string: anything else would pool clients into one bucket. */
  private checkedTracker(tracker: unknown): string {
    if (typeof tracker !== 'string' || tracker === '') this.refuseUndecidable(`getTracker returned ${JSON.stringify(tracker)}, not a non-empty string`);
    return tracker;
  }

  /** A call without an HTTP response leaves its leases to RateLimitInterceptor; without it, no limit would hold them. */
  private checkLeaseHolder(route: RouteCache): void {
    if (route.intercepted) return;
    this.refuseUndecidable(
      `${route.route} has concurrency rules and no HTTP response, so RateLimitInterceptor must hold their leases: set globalInterceptor: true in RateLimitModule.forRoot, or add @UseInterceptors(RateLimitInterceptor) to it`,
    );
  }

  /**
   * A request no rule can be decided for is refused, never admitted unchecked: a 500 with a generic body (the
   * client learns nothing of the configuration), and one log line for the operator naming what went wrong.
   */
  private refuseUndecidable(reason: string): never {
    this.logger.error(`Refused a request with 500: ${reason}`);
    throw new InternalServerErrorException();
  }

  private route(context: ExecutionContext): RouteCache {
    const handler = context.getHandler();
    const cls = context.getClass();
    let perClass = this.routes.get(handler);
    const cached = perClass?.get(cls);
    if (cached && cached.version === this.policies.version) return cached;
    const name = `${cls.name}.${handler.name}`;
    const policies = resolveRoutePolicies(this.policies, {
      route: name,
      classEntries: this.reflector.get<RateLimitEntry[] | undefined>(RATE_LIMIT_METADATA, cls),
      handlerEntries: this.reflector.get<RateLimitEntry[] | undefined>(RATE_LIMIT_METADATA, handler),
      classSkip: this.reflector.get<SkipRateLimitMetadata | undefined>(SKIP_RATE_LIMIT_METADATA, cls),
      handlerSkip: this.reflector.get<SkipRateLimitMetadata | undefined>(SKIP_RATE_LIMIT_METADATA, handler),
    });
    if (!perClass) this.routes.set(handler, (perClass = new Map()));
    const perRequest = policies.some((p) => p.resolve || p.skipIf || p.ignoreUserAgents);
    const intercepted = interceptorRunsFor(this.reflector, cls, handler, this.globalInterceptor === true);
    const moduleDefaults = new Set(policies.filter((p) => this.policies.defaults.includes(p)).map((p) => p.name));
    const entry: RouteCache = { version: this.policies.version, policies, route: routeName(cls, handler.name), perRequest, intercepted, moduleDefaults };
    perClass.set(cls, entry);
    return entry;
  }
}

