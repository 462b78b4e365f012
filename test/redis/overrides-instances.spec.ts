import type { Redis } from 'ioredis';
import { RateLimitPolicies, RateLimitService, RedisStore, type RateLimitRulesConfig } from '../../lib/index.js';
import { validateModuleOptions } from '../../lib/config/module-options.validator.js';
import { RejectionAudit } from '../../lib/observability/rejection.audit.js';
import { IoRedisAdapter } from '../../lib/stores/redis/clients/ioredis.adapter.js';
import { startRedis, uniquePrefix, type TestRedis } from '../support/redis-server.js';

const RULES: RateLimitRulesConfig = { rules: { api: { limit: 2, window: '1h', algorithm: 'fixed-window', overrides: true } } };

/**
 * Two app instances on one redis-server, each with its own client and store, on Redis's clock (no injected clock),
 * with the block cache on (the default): an override one sets applies on the other's next decision.
 */
describe('per-key overrides across app instances', () => {
  let redis: TestRedis;
  let prefix: string;
  let clients: Redis[];

  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(async () => {
    await redis.stop();
  });
  beforeEach(() => {
    prefix = uniquePrefix();
    clients = [redis.client(), redis.client()];
  });

  function instance(client: Redis, audit?: RejectionAudit): RateLimitService {
    return new RateLimitService(new RedisStore(client, { keyPrefix: prefix }), new RateLimitPolicies(RULES), validateModuleOptions({ keyPrefix: prefix }), undefined, audit);
  }

  it('lists an override that another instance listed between its index entry and its key being written', async () => {
    const writer = new RedisStore(clients[0], { keyPrefix: prefix }).overrides!;
    const reader = new RedisStore(clients[1], { keyPrefix: prefix }).overrides!;
    // The two writes of a set, with another instance's listing run between them (as a refresh every 20 ms can).
    const steps = writer as unknown as { run: (key: string, op: string, ...rest: unknown[]) => Promise<unknown> };
    const run = steps.run.bind(writer);
    let listedBetween: unknown[] | undefined;
    steps.run = async (key, op, ...rest) => {
      if (op === 'set') listedBetween = await reader.list();
      return run(key, op, ...rest);
    };
    await writer.set('api', 'abuser', { ttlMs: 3_600_000 });
    expect(listedBetween).toEqual([]);
    expect(await reader.list()).toMatchObject([{ rule: 'api', key: 'abuser', block: true }]);
    expect([...(await reader.snapshot!()).overrides.values()]).toMatchObject([{ key: 'abuser' }]);
  });

  it('applies a raise set by one instance on the next decision of another that had refused the key', async () => {
    const [a, b] = [instance(clients[0]), instance(clients[1])];
    const entries = () => [{ key: 'acme', rule: b.rule('api') }];
    for (let i = 0; i < 2; i++) expect((await b.decide(entries())).allowed).toBe(true);
    expect((await b.decide(entries())).allowed).toBe(false);
    await a.overrides.set('api', 'acme', { limit: 4, ttlMs: '1h' });
    expect((await b.decide(entries())).decisions[0]).toMatchObject({ allowed: true, limit: 4, remaining: 1 });
  });

  it('applies a block set by one instance on the next decision of another, and its removal', async () => {
    const [a, b] = [instance(clients[0]), instance(clients[1])];
    await a.overrides.set('api', 'abuser', { block: true, ttlMs: 30_000 });
    const refused = await b.consume('abuser', 'api');
    expect(refused.allowed).toBe(false);
    // The wait is what is left of the block, on Redis's clock: at most its 30 s.
    expect(refused.retryAfterMs).toBeGreaterThan(0);
    expect(refused.retryAfterMs).toBeLessThanOrEqual(30_000);
    expect(await b.overrides.list()).toMatchObject([{ rule: 'api', key: 'abuser', block: true }]);
    await b.overrides.remove('api', 'abuser');
    expect((await a.consume('abuser', 'api')).allowed).toBe(true);
    expect(await a.overrides.list()).toEqual([]);
  });

  it('writes each change to the audit stream', async () => {
    const streamKey = `${prefix}:audit`;
    const audit = new RejectionAudit(new IoRedisAdapter(clients[0], 'ioredis'), streamKey, 1000, (error) => {
      throw error;
    });
    const a = instance(clients[0], audit);
    await a.overrides.set('api', 'acme', { limit: 10, ttlMs: 60_000, reason: 'ticket 42' });
    await a.overrides.set('api', 'abuser', { block: true, ttlMs: 1000 });
    await a.overrides.remove('api', 'acme');
    const entries = await clients[0].xrange(streamKey, '-', '+');
    expect(entries.map(([, fields]) => fields)).toEqual([
      ['event', 'override-set', 'rule', 'api', 'key', 'acme', 'limit', '10', 'ttlMs', '60000', 'reason', 'ticket 42'],
      ['event', 'override-set', 'rule', 'api', 'key', 'abuser', 'block', 'true', 'ttlMs', '1000'],
      ['event', 'override-removed', 'rule', 'api', 'key', 'acme'],
    ]);
  });

  it('keeps the override in a key beside the rule state, in its slot, with the expiry asked for', async () => {
    const a = instance(clients[0]);
    await a.overrides.set('api', 'acme', { limit: 10, ttlMs: 60_000 });
    const key = `${prefix}:api:{acme}:override`;
    expect(await clients[0].pttl(key)).toBeGreaterThan(0);
    expect(await clients[0].pttl(key)).toBeLessThanOrEqual(60_000);
    expect(await clients[0].zcard(`${prefix}:overrides`)).toBe(1);
  });
});
