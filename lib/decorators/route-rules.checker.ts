import { Inject, Injectable, Optional, type OnModuleInit } from '@nestjs/common';
import { DiscoveryService, MetadataScanner, Reflector } from '@nestjs/core';
import { RateLimitConfigError } from '../rules/rate-limit-config.error.js';
import { interceptorRunsFor } from '../http/rate-limit.interceptor.js';
import { RateLimitPolicies } from '../config/rate-limit.policies.js';
import type { RateLimitPolicy } from '../interfaces/rate-limit-policy.interface.js';
import type { RateLimitRule } from '../interfaces/rule.interface.js';
import { RATE_LIMIT_GLOBAL_INTERCEPTOR, RATE_LIMIT_METADATA, SKIP_RATE_LIMIT_METADATA } from '../interfaces/rate-limit.constants.js';
import type { RateLimitEntry } from './rate-limit.decorator.js';
import { resolveRoutePolicies } from './route-policies.resolver.js';

/**
 * At start-up, resolves the rules of every decorated handler (controllers, resolvers, gateways), so that a
 * reference to a rule nobody configured stops the application there, naming the handler, instead of failing
 * its first request. The names found are then required of every config reload. A concurrency rule on a WebSocket
 * gateway without RateLimitInterceptor to hold its leases stops it too (the guard would refuse every message).
 */
@Injectable()
export class RateLimitRoutesChecker implements OnModuleInit {
  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly reflector: Reflector,
    private readonly policies: RateLimitPolicies,
    @Optional() @Inject(RATE_LIMIT_GLOBAL_INTERCEPTOR) private readonly globalInterceptor?: boolean,
  ) {}

  onModuleInit(): void {
    const referenced = new Set<string>();
    const shared = new Map<string, { route: string; rule: string }>();
    for (const wrapper of [...this.discovery.getControllers(), ...this.discovery.getProviders()]) {
      const cls = wrapper.metatype as (new (...args: never[]) => object) | undefined;
      if (typeof cls !== 'function' || !cls.prototype) continue;
      const classEntries = this.reflector.get<RateLimitEntry[] | undefined>(RATE_LIMIT_METADATA, cls);
      const gateway = this.reflector.get<boolean | undefined>(GATEWAY_METADATA, cls) === true;
      for (const method of this.scanner.getAllMethodNames(cls.prototype)) {
        const handler = (cls.prototype as Record<string, unknown>)[method];
        if (typeof handler !== 'function') continue;
        const handlerEntries = this.reflector.get<RateLimitEntry[] | undefined>(RATE_LIMIT_METADATA, handler);
        if (!classEntries && !handlerEntries) continue;
        const route = `${cls.name}.${method}`;
        const policies = resolveRoutePolicies(this.policies, {
          route,
          classEntries,
          handlerEntries,
          classSkip: this.reflector.get(SKIP_RATE_LIMIT_METADATA, cls),
          handlerSkip: this.reflector.get(SKIP_RATE_LIMIT_METADATA, handler),
        });
        for (const entry of [...(classEntries ?? []), ...(handlerEntries ?? [])]) if (entry.kind === 'ref') referenced.add(entry.name);
        // A request-dependent rule has no one definition to compare; its resolved rules share state like any other.
        for (const policy of policies) if (policy.shared && !policy.resolve) this.checkShared(shared, route, policy.rule);
        if (gateway) this.checkLeaseHolder(route, cls, handler, policies);
      }
    }
    this.policies.require(referenced);
  }

  /** A gateway's message has no HTTP response whose end would release a lease: RateLimitInterceptor holds it. */
  private checkLeaseHolder(route: string, cls: Function, handler: Function, policies: readonly RateLimitPolicy[]): void {
    const leased = policies.find((p) => !p.resolve && p.rule.algorithm === 'concurrency');
    if (!leased || interceptorRunsFor(this.reflector, cls, handler, this.globalInterceptor === true)) return;
    throw new RateLimitConfigError(
      `@RateLimit on ${route}`,
      leased.name,
      'RateLimitInterceptor on a WebSocket gateway with a concurrency rule, to hold its leases: globalInterceptor: true in RateLimitModule.forRoot, or @UseInterceptors(RateLimitInterceptor) on the gateway',
    );
  }

  /** Routes sharing a rule share its keys: they must agree on what the rule is. */
  private checkShared(seen: Map<string, { route: string; rule: string }>, route: string, rule: RateLimitRule): void {
    const definition = JSON.stringify(rule);
    const configured = this.policies.get(rule.name);
    const first = seen.get(rule.name) ?? (configured && !configured.resolve && { route: 'the module options', rule: JSON.stringify(configured.rule) });
    if (first && first.rule !== definition) {
      throw new RateLimitConfigError(`@RateLimit on ${route}`, rule.name, `one definition per shared rule name; ${first.route} defines "${rule.name}" differently`);
    }
    if (!seen.has(rule.name)) seen.set(rule.name, { route, rule: definition });
  }
}

// @nestjs/websockets' metadata key of @WebSocketGateway (GATEWAY_METADATA), read without importing the optional package.
const GATEWAY_METADATA = 'websockets:is_gateway';
