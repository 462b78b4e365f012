import { Redis } from 'ioredis';
import { MemoryStore, RateLimitPolicies, RateLimitService, RateLimitWaitTimeoutError, RedisStore, ResilientStore, safeClientOptions, type FailurePolicy } from '../../lib/index.js';
import { validateModuleOptions } from '../../lib/config/module-options.validator.js';
import { freePort } from '../support/redis-server.js';

/**
 * waitToConsume while Redis is unreachable: the failure policy's decision is waited on like any other. 'open' admits
 * at once (uncounted), 'closed' refuses with a wait of at least 1 s (the circuit's retry), 'memory' limits per process.
 */
describe('waitToConsume while Redis is unreachable', () => {
  let client: Redis;
  const services: RateLimitService[] = [];
  beforeAll(async () => {
    // Nothing listens on this port: every command fails at once (no offline queue).
    client = new Redis({ port: await freePort(), ...safeClientOptions(50), lazyConnect: true });
    client.on('error', () => undefined);
  });
  afterAll(() => {
    for (const service of services) service.onModuleDestroy();
    client.disconnect();
  });
  function service(failurePolicy: FailurePolicy): RateLimitService {
    const store = new ResilientStore(new RedisStore(client), new MemoryStore(), { failurePolicy, timeoutMs: 50 });
    const created = new RateLimitService(store, new RateLimitPolicies({ rules: { psp: { algorithm: 'sliding-log', limit: 1, window: '1m' } } }), validateModuleOptions({}));
    services.push(created);
    return created;
  }

  it("resolves at once under 'open', every call admitted uncounted", async () => {
    const limits = service('open');
    const results = [await limits.waitToConsume('psp', 'psp'), await limits.waitToConsume('psp', 'psp')];
    expect(results.map((r) => [r.allowed, r.decisions[0].degraded])).toEqual([[true, 'open'], [true, 'open']]);
  });

  it("waits the circuit's retry (1 s at least) under 'closed': a shorter maxWaitMs rejects at once", async () => {
    const error = await service('closed').waitToConsume('psp', 'psp', { maxWaitMs: 500 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RateLimitWaitTimeoutError);
    expect((error as RateLimitWaitTimeoutError).retryAfterMs).toBeGreaterThanOrEqual(1_000);
  });

  it("limits per process under 'memory': the second call waits a minute, so a maxWaitMs of 1 s rejects it", async () => {
    const limits = service('memory');
    expect((await limits.waitToConsume('psp', 'psp')).decisions[0].degraded).toBe('memory');
    await expect(limits.waitToConsume('psp', 'psp', { maxWaitMs: 1_000 })).rejects.toBeInstanceOf(RateLimitWaitTimeoutError);
  });
});
