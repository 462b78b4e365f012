import { compileGuardFields, compileRoutePolicy, splitPolicyOptions } from '../config/policy.compiler.js';
import { RATE_LIMIT_METADATA } from '../interfaces/rate-limit.constants.js';
import type { RateLimitDecoratorOptions, RateLimitPolicyOptions } from '../interfaces/rate-limit-options.interface.js';
import type { Duration, RateLimitAlgorithm } from '../interfaces/rule.interface.js';

/** One `@RateLimit` as stored in metadata: a rule written in place, or a reference to a named rule. */
export type RateLimitEntry =
  | { readonly kind: 'inline'; readonly name?: string; readonly options: RateLimitPolicyOptions }
  | { readonly kind: 'ref'; readonly name: string; readonly options: Pick<RateLimitPolicyOptions, 'key' | 'cost' | 'shared' | 'keyRequired' | 'skipIf' | 'ignoreUserAgents' | 'mode' | 'refusedEvents'> };

/**
 * Limits a controller (every handler in it) or one handler. Several `@RateLimit` on one target must all
 * pass, decided all-or-nothing in one round trip; a handler's rule replaces the class's rule and the module's
 * default rule of the same name (an unnamed rule is `'default'`, further unnamed ones `'default-2'`, ...).
 *
 * @example
 * ‌@RateLimit('login')                                       // the named rule of the module options / config
 * ‌@RateLimit({ name: 'login', key: 'body:username' })      // the named rule, counted per another key
 * ‌@RateLimit({ limit: 5, window: '1m', key: 'user' })      // a rule written in place
 * ‌@RateLimit({ limit: (ctx) => planOf(ctx).limit, window: '1h', key: 'header:x-api-key' }) // per request
 * ‌@RateLimit({ name: 'short', skipIf: (ctx) => isInternal(ctx) }) // a default rule, skipped for some requests
 * ‌@RateLimit('1m', 5, 'sliding-log')                       // shorthand: window, limit, algorithm
 */
export function RateLimit(name: string): ClassDecorator & MethodDecorator;
export function RateLimit(options: RateLimitDecoratorOptions): ClassDecorator & MethodDecorator;
export function RateLimit(window: Duration, limit: number | string, algorithm?: RateLimitAlgorithm): ClassDecorator & MethodDecorator;
export function RateLimit(
  first: string | RateLimitDecoratorOptions | Duration,
  limit?: number | string,
  algorithm?: RateLimitAlgorithm,
): ClassDecorator & MethodDecorator {
  return (target: object, propertyKey?: string | symbol, descriptor?: PropertyDescriptor): void => {
    const holder = descriptor ? (descriptor.value as object) : target;
    const where = `@RateLimit on ${describeTarget(target, propertyKey)}`;
    const entry = toEntry(first, limit, algorithm, where);
    const existing = (Reflect.getOwnMetadata(RATE_LIMIT_METADATA, holder) as RateLimitEntry[] | undefined) ?? [];
    // Decorators run bottom-up; prepending keeps the entries in the order they are written.
    Reflect.defineMetadata(RATE_LIMIT_METADATA, [entry, ...existing], holder);
  };
}

function toEntry(first: unknown, limit: unknown, algorithm: RateLimitAlgorithm | undefined, where: string): RateLimitEntry {
  if (limit !== undefined || algorithm !== undefined) {
    const options: RateLimitPolicyOptions = { window: first as Duration, limit: limit as number, ...(algorithm ? { algorithm } : {}) };
    compileRoutePolicy(options, 'default', where);
    return { kind: 'inline', options };
  }
  if (typeof first === 'string') return { kind: 'ref', name: checkName(first, where), options: {} };
  if (first === null || typeof first !== 'object' || Array.isArray(first)) {
    throw new TypeError(`${where}: expected a rule name, an options object, or (window, limit, algorithm?); got ${String(first)}`);
  }
  const { name, ...options } = first as RateLimitDecoratorOptions;
  if (name !== undefined) checkName(name, where);
  const { rule, guard } = splitPolicyOptions(options);
  if (Object.keys(rule).length === 0) {
    if (name === undefined) throw new TypeError(`${where}: give "limit" and "window", or the "name" of a configured rule`);
    compileGuardFields(guard, where);
    return { kind: 'ref', name, options: guard };
  }
  // Validated now, so that a bad rule stops the app at start-up, naming the handler.
  compileRoutePolicy(options as RateLimitPolicyOptions, name ?? 'default', where);
  if (options.shared && name === undefined) {
    // Shared state is found by rule name alone: two unnamed shared rules would count into one another.
    throw new TypeError(`${where}: a shared rule needs a "name", the one its routes share`);
  }
  return { kind: 'inline', name, options: options as RateLimitPolicyOptions };
}

function checkName(name: unknown, where: string): string {
  if (typeof name !== 'string' || !/^[A-Za-z0-9_.-]{1,64}$/.test(name)) {
    throw new TypeError(`${where}: invalid rule name ${JSON.stringify(name)} (1-64 letters, digits, "_", "." or "-")`);
  }
  return name;
}

function describeTarget(target: object, propertyKey?: string | symbol): string {
  const cls = typeof target === 'function' ? target : target.constructor;
  return propertyKey === undefined ? cls.name : `${cls.name}.${String(propertyKey)}`;
}
