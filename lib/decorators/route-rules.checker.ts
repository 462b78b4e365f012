import { Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import { DiscoveryService, MetadataScanner, Reflector } from '@nestjs/core';
import { RateLimitPolicies } from '../config/rate-limit.policies.js';
import { RATE_LIMIT_METADATA, SKIP_RATE_LIMIT_METADATA } from '../rate-limit.constants.js';
import type { RateLimitEntry } from './rate-limit.decorator.js';
import { resolveRoutePolicies } from './route-policies.resolver.js';

/**
 * At start-up, resolves the rules of every decorated handler (controllers, resolvers, gateways), so that a
 * reference to a rule nobody configured stops the application there, naming the handler, instead of failing
 * its first request. The names found are then required of every config reload.
 */
@Injectable()
export class RateLimitRoutesChecker implements OnApplicationBootstrap {
  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly reflector: Reflector,
    private readonly policies: RateLimitPolicies,
  ) {}

  onApplicationBootstrap(): void {
    const referenced = new Set<string>();
    for (const wrapper of [...this.discovery.getControllers(), ...this.discovery.getProviders()]) {
      const cls = wrapper.metatype as (new (...args: never[]) => object) | undefined;
      if (typeof cls !== 'function' || !cls.prototype) continue;
      const classEntries = this.reflector.get<RateLimitEntry[] | undefined>(RATE_LIMIT_METADATA, cls);
      for (const method of this.scanner.getAllMethodNames(cls.prototype)) {
        const handler = (cls.prototype as Record<string, unknown>)[method];
        if (typeof handler !== 'function') continue;
        const handlerEntries = this.reflector.get<RateLimitEntry[] | undefined>(RATE_LIMIT_METADATA, handler);
        if (!classEntries && !handlerEntries) continue;
        resolveRoutePolicies(this.policies, {
          route: `${cls.name}.${method}`,
          classEntries,
          handlerEntries,
          classSkip: this.reflector.get(SKIP_RATE_LIMIT_METADATA, cls),
          handlerSkip: this.reflector.get(SKIP_RATE_LIMIT_METADATA, handler),
        });
        for (const entry of [...(classEntries ?? []), ...(handlerEntries ?? [])]) if (entry.kind === 'ref') referenced.add(entry.name);
      }
    }
    this.policies.require(referenced);
  }
}
