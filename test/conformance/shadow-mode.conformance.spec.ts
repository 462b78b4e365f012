import { RateLimitPolicies, RateLimitService, RedisStore, type Decision, type MultiDecision, type RateLimitDecisionEvent, type RateLimitMetrics, type RateLimitRule, type RateLimitRulesConfig, type RateLimitStore, type RuleKey } from '../../lib/index.js';
import { validateModuleOptions } from '../../lib/config/module-options.validator.js';
import type { Redis } from 'ioredis';
import { RejectionAudit } from '../../lib/observability/rejection.audit.js';
import { IoRedisAdapter } from '../../lib/stores/redis/clients/ioredis.adapter.js';
import { useStores } from '../support/stores.js';

/** A store that counts the calls it passes on: "one store call" is a behaviour here. */
class CountingStore implements RateLimitStore {
  calls = 0;
  constructor(private readonly inner: RateLimitStore) {}
  consume(key: string, rule: RateLimitRule, cost?: number): Promise<Decision> {
    this.calls++;
    return this.inner.consume(key, rule, cost);
  }
  consumeAll(entries: readonly RuleKey[], cost?: number): Promise<MultiDecision> {
    this.calls++;
    return this.inner.consumeAll(entries, cost);
  }
  peek = (key: string, rule: RateLimitRule, cost?: number) => this.inner.peek(key, rule, cost);
  refund = (key: string, rule: RateLimitRule, cost?: number) => this.inner.refund(key, rule, cost);
  reset = (key: string, rule: RateLimitRule) => this.inner.reset(key, rule);
}

const RULES: RateLimitRulesConfig = {
  rules: {
    // Tried out in shadow: 1 per minute.
    strict: { limit: 1, window: '1m', algorithm: 'fixed-window', mode: 'shadow' },
    // In force: 3 per minute.
    burst: { limit: 3, window: '1m', algorithm: 'fixed-window' },
    // In force: 1 per minute.
    tight: { limit: 1, window: '1m', algorithm: 'fixed-window' },
    // No mode of its own: the module's default.
    plain: { limit: 1, window: '1m', algorithm: 'fixed-window' },
  },
};

describe.each(['memory', 'redis'] as const)('shadow mode on the %s store', (kind) => {
  const get = useStores(kind);
  const metricsSeen: [string, string][] = [];
  const rejected: RateLimitDecisionEvent[] = [];
  let counting: CountingStore;

  function service(rules: RateLimitRulesConfig = RULES, audit?: RejectionAudit): RateLimitService {
    const { store, clock, prefix } = get();
    counting = new CountingStore(store);
    metricsSeen.length = 0;
    rejected.length = 0;
    const metrics: RateLimitMetrics = { decision: (rule, result) => metricsSeen.push([rule, result]), duration() {}, storeError() {}, circuit() {}, blockCacheHit() {} };
    const settings = validateModuleOptions({ clock: clock.now, keyPrefix: prefix, onRejected: (event) => rejected.push(event) });
    return new RateLimitService(counting, new RateLimitPolicies(rules), settings, metrics, audit);
  }

  it('admits a request its shadow rule refuses, and marks the refusal shadow', async () => {
    const rateLimit = service();
    await rateLimit.consumeAll('u1', ['strict']);
    const second = await rateLimit.consumeAll('u1', ['strict']);
    expect(second.allowed).toBe(true);
    expect(second.decisions[0]).toMatchObject({ allowed: false, shadow: true });
  });

  it('never throws from enforce for a shadow refusal', async () => {
    const rateLimit = service();
    await rateLimit.enforce('u1', 'strict');
    await expect(rateLimit.enforce('u1', 'strict')).resolves.toMatchObject({ allowed: true });
  });

  it('charges the enforced rules of a stacked request that its shadow rule refuses', async () => {
    const rateLimit = service();
    for (let i = 0; i < 3; i++) expect((await rateLimit.consumeAll('u1', ['burst', 'strict'])).allowed).toBe(true);
    const fourth = await rateLimit.consumeAll('u1', ['burst', 'strict']);
    expect(fourth.allowed).toBe(false);
    expect(fourth.decisions[0].allowed).toBe(false);
  });

  it('charges nothing anywhere, shadow rules included, when an enforced rule refuses', async () => {
    const rateLimit = service();
    const shadowed = { name: 'wide', limit: 5, window: '1m', algorithm: 'fixed-window' as const, mode: 'shadow' as const };
    expect((await rateLimit.consumeAll([{ key: 'u1', rule: 'tight' }, { key: 'u1', rule: shadowed }])).allowed).toBe(true);
    for (let i = 0; i < 3; i++) expect((await rateLimit.consumeAll([{ key: 'u1', rule: 'tight' }, { key: 'u1', rule: shadowed }])).allowed).toBe(false);
    // 5 - the one admitted request - the peeked one: the three refused requests charged the shadow rule nothing.
    expect((await rateLimit.peek('u1', shadowed)).remaining).toBe(3);
  });

  it('counts a shadow refusal as shadow_rejected, never as rejected', async () => {
    const rateLimit = service();
    await rateLimit.consumeAll('u1', ['strict']);
    await rateLimit.consumeAll('u1', ['strict']);
    expect(metricsSeen).toEqual([
      ['strict', 'allowed'],
      ['strict', 'shadow_rejected'],
    ]);
  });

  it('calls onRejected with shadow: true for a shadow refusal of an admitted request', async () => {
    const rateLimit = service();
    await rateLimit.consumeAll('u1', ['strict']);
    await rateLimit.consumeAll('u1', ['strict']);
    expect(rejected).toHaveLength(1);
    expect(rejected[0]).toMatchObject({ shadow: true, result: { allowed: true } });
  });

  it('decides a lone shadow rule in one store call and admits it however often it refuses', async () => {
    const rateLimit = service();
    const results = [];
    for (let i = 0; i < 4; i++) results.push(await rateLimit.decide([{ key: 'u1', rule: rateLimit.rule('strict'), shadow: true }]));
    expect(results.map((r) => [r.allowed, r.decisions[0].allowed])).toEqual([
      [true, true],
      [true, false],
      [true, false],
      [true, false],
    ]);
    // Never remembered as a refusal by the block cache: each request reaches the store, once.
    expect(counting.calls).toBe(4);
  });

  it('applies the module-wide mode to rules that set none, and a rule\'s own mode over it', async () => {
    const rateLimit = service({ ...RULES, mode: 'shadow', rules: { ...RULES.rules, tight: { ...RULES.rules!.tight, mode: 'enforce' } } });
    await rateLimit.consumeAll('u1', ['plain']);
    expect((await rateLimit.consumeAll('u1', ['plain'])).allowed).toBe(true);
    await rateLimit.consumeAll('u1', ['tight']);
    expect((await rateLimit.consumeAll('u1', ['tight'])).allowed).toBe(false);
  });

  it('admits a request its shadow concurrency rule has no free slot for, holding no lease for it', async () => {
    const rateLimit = service({ rules: { exports: { algorithm: 'concurrency', limit: 1, leaseMs: '1m', mode: 'shadow' } } });
    const held = await rateLimit.acquire('u1', 'exports');
    const result = await rateLimit.decideWithLeases([{ key: 'u1', rule: rateLimit.rule('exports'), shadow: true }]);
    expect(result.allowed).toBe(true);
    expect(result.decisions[0]).toMatchObject({ allowed: false, shadow: true });
    expect(result.leases).toHaveLength(0);
    await held.lease!.release();
  });

  if (kind === 'redis') {
    it('writes a shadow refusal to the audit stream marked shadow', async () => {
      const client = (get().store as RedisStore).client as Redis;
      const streamKey = `${get().prefix}:audit`;
      const rateLimit = service(RULES, new RejectionAudit(new IoRedisAdapter(client, 'ioredis'), streamKey, 1000, (error) => { throw error; }));
      await rateLimit.consumeAll('u1', ['strict']);
      await rateLimit.consumeAll('u1', ['strict']);
      const entries = await client.xrange(streamKey, '-', '+');
      expect(entries).toHaveLength(1);
      expect(entries[0][1]).toEqual(['rule', 'strict', 'key', 'u1', 'retryAfterMs', expect.any(String), 'shadow', 'true']);
    });
  }
});
