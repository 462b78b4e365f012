import { Injectable, type OnModuleInit } from '@nestjs/common';
import { DiscoveryService, MetadataScanner, Reflector } from '@nestjs/core';
import { RateLimitConfigError } from '../config/rate-limit-config.error.js';
import { RateLimitPolicies } from '../config/rate-limit.policies.js';
import type { RateLimitRule } from '../interfaces/rule.interface.js';
import { RATE_LIMIT_METADATA, SKIP_RATE_LIMIT_METADATA } from '../rate-limit.constants.js';
import type { RateLimitEntry } from './rate-limit.decorator.js';
import { resolveRoutePolicies } from './route-policies.resolver.js';

/**
 * At start-up, resolves the rules of every decorated handler (controllers, resolvers, gateways), so that a
 * reference to a rule nobody configured stops the application there, naming the handler, instead of failing
 * its first request. The names found are then required of every config reload.
 */
@Injectable()
export class RateLimitRoutesChecker implements OnModuleInit {
  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly reflector: Reflector,
    private readonly policies: RateLimitPolicies,
  ) {}

  onModuleInit(): void {
    const referenced = new Set<string>();
    const shared = new Map<string, { route: string; rule: string }>();
    for (const wrapper of [...this.discovery.getControllers(), ...this.discovery.getProviders()]) {
      const cls = wrapper.metatype as (new (...args: never[]) => object) | undefined;
      if (typeof cls !== 'function' || !cls.prototype) continue;
      const classEntries = this.reflector.get<RateLimitEntry[] | undefined>(RATE_LIMIT_METADATA, cls);
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
      }
    }
    this.policies.require(referenced);
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
