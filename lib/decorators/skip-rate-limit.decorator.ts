import { SKIP_RATE_LIMIT_METADATA } from '../interfaces/rate-limit.constants.js';

/** `true` (every rule) or the names of the rules skipped. */
export type SkipRateLimitMetadata = true | readonly string[];

/**
 * Exempts a controller or a handler from rate limiting: from every rule, or only from the named ones
 * (`@SkipRateLimit('default')` keeps a handler's own rules but drops the global default). A rule declared on
 * a handler still applies under a class-level skip: the more specific declaration wins.
 */
export function SkipRateLimit(...names: string[]): ClassDecorator & MethodDecorator {
  return (target: object, _propertyKey?: string | symbol, descriptor?: PropertyDescriptor): void => {
    const holder = descriptor ? (descriptor.value as object) : target;
    const existing = Reflect.getOwnMetadata(SKIP_RATE_LIMIT_METADATA, holder) as SkipRateLimitMetadata | undefined;
    const next: SkipRateLimitMetadata = names.length === 0 || existing === true ? true : [...(existing ?? []), ...names];
    Reflect.defineMetadata(SKIP_RATE_LIMIT_METADATA, next, holder);
  };
}
