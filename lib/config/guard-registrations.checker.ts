import { APP_GUARD, MetadataScanner, type ModulesContainer } from '@nestjs/core';

type NestModule = ModulesContainer extends Map<string, infer M> ? M : never;
type Wrapper = NestModule['providers'] extends Map<unknown, infer W> ? W : never;

// Nest's own metadata key of @UseGuards (GUARDS_METADATA).
const GUARDS_METADATA = '__guards__';
// Each application's warnings are said once, however many RateLimitModules it imports.
const checked = new WeakSet<ModulesContainer>();

/**
 * Every RateLimitGuard that runs on a request counts it: two of them (the module's `globalGuard: true` and a
 * subclass registered as APP_GUARD, or a `@UseGuards(RateLimitGuard)` beside a global one) count each request
 * twice, and clients are refused at half their limit, or sooner. Nothing fails, so this is looked for at
 * start-up, in the application's modules; returns a warning per problem found (none the second time it is asked
 * for the same application). Guards given to `app.useGlobalGuards()` are not in the modules, and not seen.
 *
 * @param rateLimitModule the RateLimitModule class, whose APP_GUARD is the one `globalGuard: true` registers
 * @param rateLimitGuard the RateLimitGuard class: given, not imported, as config/ sits below the module's own files
 */
export function guardRegistrationWarnings(modules: ModulesContainer, rateLimitModule: Function, rateLimitGuard: Function): string[] {
  const isGuardClass = (value: unknown): value is Function => typeof value === 'function' && (value === rateLimitGuard || value.prototype instanceof rateLimitGuard);
  if (checked.has(modules)) return [];
  checked.add(modules);
  const global: string[] = [];
  let fromSwitch = false;
  for (const module of modules.values()) {
    // A request-scoped APP_GUARD is among the module's injectables, a static one among its providers.
    for (const [token, wrapper] of [...module.providers, ...module.injectables]) {
      if (typeof token !== 'string' || !token.startsWith(`${APP_GUARD} `)) continue;
      const guard = rateLimitGuardClass(wrapper, isGuardClass);
      if (!guard) continue;
      const isSwitch = module.metatype === rateLimitModule && guard === rateLimitGuard;
      fromSwitch ||= isSwitch;
      // The module's own first: the warning then reads the same whatever the order of the modules.
      if (isSwitch) global.unshift('RateLimitGuard (globalGuard: true of RateLimitModule)');
      else global.push(`${guard.name} (APP_GUARD in ${module.metatype.name})`);
    }
  }
  const warnings: string[] = [];
  const fix = fromSwitch
    ? 'To use a subclass of RateLimitGuard, drop globalGuard: true from RateLimitModule and register only the subclass: { provide: APP_GUARD, useClass: YourGuard }'
    : 'Register one of them only';
  if (global.length > 1) {
    warnings.push(`${global.length} rate-limit guards run on every request: ${global.join(' and ')}. Each counts every request, so clients are refused at a fraction of their limits. ${fix}.`);
  }
  const local = global.length > 0 ? routesGuardedLocally(modules, isGuardClass) : [];
  if (local.length > 0) {
    const shown = local.slice(0, 5).join(', ') + (local.length > 5 ? ` and ${local.length - 5} more` : '');
    warnings.push(
      `@UseGuards applies a rate-limit guard to ${shown}, where ${global[0]} already runs on every request: their requests are counted twice. Remove those @UseGuards, or the global registration.`,
    );
  }
  return warnings;
}

/** The RateLimitGuard class (or subclass) an APP_GUARD provider gives, if it gives one. */
function rateLimitGuardClass(wrapper: Wrapper, isRateLimitGuardClass: (value: unknown) => value is Function): Function | undefined {
  const instance = wrapper.instance as { constructor?: unknown } | null | undefined;
  if (typeof instance === 'object' && instance !== null && isRateLimitGuardClass(instance.constructor)) return instance.constructor;
  // Request-scoped, or not built: the class it names (useClass), or aliases (useExisting).
  const [aliased] = wrapper.isAlias ? (wrapper.inject ?? []) : [];
  return [wrapper.metatype, aliased].find(isRateLimitGuardClass);
}

/** `Class` or `Class.method` of every controller, resolver or gateway whose @UseGuards names a rate-limit guard. */
function routesGuardedLocally(modules: ModulesContainer, isRateLimitGuardClass: (value: unknown) => value is Function): string[] {
  const scanner = new MetadataScanner();
  const found = new Set<string>();
  const guarded = (target: object) => ((Reflect.getMetadata(GUARDS_METADATA, target) as unknown[] | undefined) ?? []).some((g) => isRateLimitGuardClass(g) || isRateLimitGuardClass((g as { constructor?: unknown } | null)?.constructor));
  for (const module of modules.values()) {
    for (const wrapper of [...module.controllers.values(), ...module.providers.values()]) {
      const cls = wrapper.metatype;
      if (typeof cls !== 'function' || !cls.prototype) continue;
      if (guarded(cls)) found.add(cls.name);
      for (const method of scanner.getAllMethodNames(cls.prototype)) {
        const handler = (cls.prototype as Record<string, unknown>)[method];
        if (typeof handler === 'function' && guarded(handler)) found.add(`${cls.name}.${method}`);
      }
    }
  }
  return [...found];
}
