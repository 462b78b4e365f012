import { validateModuleOptions } from '../config/module-options.validator.js';
import { RateLimitPolicies } from '../config/rate-limit.policies.js';
import { RATE_LIMIT_SETTINGS } from '../interfaces/rate-limit.constants.js';
import type { RateLimitModuleOptions, RateLimitPolicyOptions } from '../interfaces/rate-limit-options.interface.js';
import type { RateLimitPolicy } from '../interfaces/rate-limit-policy.interface.js';
import type { RateLimitSettings } from '../interfaces/rate-limit-settings.interface.js';
import type { Duration } from '../interfaces/rule.interface.js';
import { MODULE_OPTIONS_TOKEN } from '../rate-limit.module-definition.js';
import { RateLimitService } from '../rate-limit.service.js';
import { eraseLeases, eraseStore } from './key.eraser.js';
import { expectRateLimited, type RateLimitedExpectation, type RateLimitedResponse, type TestResponse } from './rate-limited.assertion.js';
import { RateLimitTestingError } from './rate-limit-testing.error.js';
import { RuleOverrides } from './rule.overrides.js';
import { RateLimitTestClock } from './test.clock.js';
import { isTestingService, testingServiceClass, type TestingControl, type TestingRateLimitService } from './testing.service.js';
import { TestingSwitch } from './testing.switch.js';

/**
 * The part of `@nestjs/testing`'s TestingModuleBuilder the kit uses (`Test.createTestingModule(...)`), so that the
 * kit needs no import of it and fits Nest 11 and 12 alike.
 */
export interface OverridableModuleBuilder<B> {
  overrideProvider(token: any): {
    useFactory(options: { factory: (...args: any[]) => any; inject?: any[] }): B;
    useClass(type: any): B;
  };
}

/** An app or a testing module: what `RateLimitTesting.from` reads the module's providers from. */
export interface ProviderSource {
  get(token: any, options?: { strict?: boolean }): any;
}

/** Options of `RateLimitTesting.install`. */
export interface RateLimitTestingOptions {
  /** Where the test clock starts, in ms since the epoch. @default TEST_CLOCK_START_MS (2026-01-01T00:00:00Z) */
  startMs?: number;
}

const NOT_INSTALLED =
  'RateLimitTesting.from(app) needs an app compiled with the testing kit: ' +
  'RateLimitTesting.install(Test.createTestingModule({ imports: [AppModule] })).compile(), then moduleRef.createNestApplication()';

/**
 * Control of an app's rate limiting from its tests: a clock the limits follow, every key forgotten between tests,
 * rules raised or limits switched off for one test, and the assertion of a 429. `install` puts the kit into a
 * testing module before it is compiled; `from(app)` hands it over once the app exists.
 */
export class RateLimitTesting {
  /**
   * Makes the app's rate limiting controllable from the test: every store the module creates decides on a test
   * clock (which replaces any `clock` option), and decisions pass through a switch that `disable()` turns off.
   * Nothing else changes: the app's own options, rules, store and guard are used as configured.
   */
  static install<B extends OverridableModuleBuilder<B>>(builder: B, options: RateLimitTestingOptions = {}): B {
    const control: TestingControl = { clock: new RateLimitTestClock(options.startMs), limits: new TestingSwitch(), rules: new RuleOverrides() };
    return builder
      .overrideProvider(RATE_LIMIT_SETTINGS)
      .useFactory({
        inject: [MODULE_OPTIONS_TOKEN],
        factory: (moduleOptions: RateLimitModuleOptions): RateLimitSettings => ({ ...validateModuleOptions(moduleOptions), clock: control.clock.now }),
      })
      .overrideProvider(RateLimitService)
      .useClass(testingServiceClass(control));
  }

  /** The kit of an app (or testing module) compiled after `install`; throws, saying how to install it, otherwise. */
  static from(app: ProviderSource): RateLimitTesting {
    let service: unknown;
    try {
      service = app.get(RateLimitService, { strict: false });
    } catch {
      throw new RateLimitTestingError(`${NOT_INSTALLED} (no RateLimitModule was found in it)`);
    }
    if (!isTestingService(service)) throw new RateLimitTestingError(NOT_INSTALLED);
    return new RateLimitTesting(
      service,
      app.get(RateLimitPolicies, { strict: false }) as RateLimitPolicies,
      app.get(RATE_LIMIT_SETTINGS, { strict: false }) as RateLimitSettings,
      app.get(MODULE_OPTIONS_TOKEN, { strict: false }) as RateLimitModuleOptions,
    );
  }

  private readonly control: TestingControl;

  private constructor(
    private readonly service: TestingRateLimitService,
    private readonly policies: RateLimitPolicies,
    private readonly settings: RateLimitSettings,
    private readonly options: RateLimitModuleOptions,
  ) {
    this.control = service.testing;
  }

  /** The clock the app's rate limiting decides on. */
  get clock(): RateLimitTestClock {
    return this.control.clock;
  }

  /** Moves the clock forward: ms, or a duration such as `'1m'`. */
  advance(by: Duration): void {
    this.control.clock.advance(by);
  }

  /**
   * A fresh start, for a `beforeEach`: forgets every key (counts, lockouts, leases, the local block cache; on Redis
   * every key under the module's `keyPrefix`, and no other), puts back every rule `setRule` changed, and switches
   * limits on again. The clock keeps its time.
   */
  async reset(): Promise<void> {
    this.control.rules.restore(this.policies);
    this.control.limits.enable();
    this.service.blockCache?.clear();
    // Units taken ahead are dropped, not given back: the keys they would go back to are being erased.
    this.service.budgets?.clear(false);
    eraseLeases(this.service.leases.inner);
    await eraseStore(this.service.store.inner);
  }

  /**
   * Puts in force the rule `name` (a named rule, or `'default'` for a single default rule) with `change` over its
   * options, e.g. `setRule('login', { limit: 100 })`, until `reset()` puts it back. An invalid result throws a
   * RateLimitConfigError naming the field, and changes nothing.
   */
  setRule(name: string, change: Partial<RateLimitPolicyOptions>): RateLimitPolicy {
    return this.control.rules.set(this.policies, { settings: this.settings, options: this.options }, name, change);
  }

  /**
   * Switches rate limiting off until `enable()` or `reset()`: every rule of the guard and of RateLimitService admits
   * and counts nothing (concurrency rules grant leases that hold nothing). Refuses, throwing, when
   * NODE_ENV=production.
   */
  disable(): void {
    this.control.limits.disable();
    // A refusal remembered before would still be repeated without asking the store.
    this.service.blockCache?.clear();
    // Units taken ahead would still be spent, and counted, from this instance.
    this.service.budgets?.clear();
  }

  /** Switches rate limiting back on. */
  enable(): void {
    this.control.limits.enable();
  }

  /** Whether rate limiting is on. */
  get enabled(): boolean {
    return this.control.limits.enabled;
  }

  /** `expectRateLimited` with the app's own `headers` mode. */
  expectRateLimited(res: TestResponse, expected: Omit<RateLimitedExpectation, 'headers'> = {}): RateLimitedResponse {
    return expectRateLimited(res, { ...expected, headers: this.settings.headers });
  }
}
