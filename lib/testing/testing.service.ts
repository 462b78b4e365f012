import { RateLimitService } from '../rate-limit.service.js';
import { MemoryLeaseStore } from '../stores/leases/memory-lease.store.js';
import { MemoryStore } from '../stores/memory/memory.store.js';
import type { RuleOverrides } from './rule.overrides.js';
import { SwitchableLeaseStore, SwitchableStore } from './switchable.store.js';
import type { RateLimitTestClock } from './test.clock.js';
import type { TestingSwitch } from './testing.switch.js';

/** What one app under test shares with every `RateLimitTesting.from(app)`. */
export interface TestingControl {
  readonly clock: RateLimitTestClock;
  readonly limits: TestingSwitch;
  readonly rules: RuleOverrides;
}

/** The service the testing kit puts in place of RateLimitService: the same, over stores it can switch off. */
export interface TestingRateLimitService extends RateLimitService {
  readonly testing: TestingControl;
  readonly store: SwitchableStore;
  readonly leases: SwitchableLeaseStore;
}

/**
 * A RateLimitService class for one app under test, deciding through stores its switch can turn off. It takes
 * RateLimitService's own injection metadata (inherited), so it stands in for it through `overrideProvider`.
 */
export function testingServiceClass(testing: TestingControl): typeof RateLimitService {
  return class extends RateLimitService implements TestingRateLimitService {
    declare readonly store: SwitchableStore;
    declare readonly leases: SwitchableLeaseStore;
    readonly testing: TestingControl;

    constructor(...args: ConstructorParameters<typeof RateLimitService>) {
      const [store, , settings] = args;
      // The wrapped memory store loses its synchronous path (a MemoryStore exactly), and with it the reason to have
      // no block cache: kept off, so that the memory store still decides every request itself.
      if (Object.getPrototypeOf(store) === MemoryStore.prototype) args[2] = { ...settings, blockCacheKeys: 0 };
      args[0] = new SwitchableStore(store, testing.limits);
      args[5] = new SwitchableLeaseStore(args[5] ?? new MemoryLeaseStore({ keyPrefix: settings.keyPrefix, clock: settings.clock }), testing.limits);
      super(...args);
      this.testing = testing;
    }
  };
}

export function isTestingService(service: unknown): service is TestingRateLimitService {
  return service instanceof RateLimitService && (service as unknown as Partial<TestingRateLimitService>).testing !== undefined;
}
