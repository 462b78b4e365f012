import { RateLimitPolicies, RateLimitService, type RateLimitRulesConfig } from '../../lib/index.js';
import { validateModuleOptions } from '../../lib/config/module-options.validator.js';
import { useStores, type StoreKind } from '../support/stores.js';

/**
 * Local budgets (`localBudget`): instances take units of a hot key's budget ahead and spend them with no store call.
 * Every test runs several services (app instances) on one store, on a clock the test moves.
 */
const RULES: RateLimitRulesConfig = {
  rules: {
    fw: { limit: 1000, window: '1m', algorithm: 'fixed-window', localBudget: { maxUnits: 20, maxMs: '1s' } },
    sw: { limit: 1000, window: '1m', algorithm: 'sliding-window', segments: 6, localBudget: { maxUnits: 20, maxMs: '1s' } },
    tb: { limit: 1000, window: '1m', algorithm: 'token-bucket', localBudget: { maxUnits: 20, maxMs: '1s' } },
    gcra: { limit: 1000, window: '1m', algorithm: 'gcra', localBudget: { maxUnits: 20, maxMs: '1s' } },
    small: { limit: 50, window: '1m', algorithm: 'fixed-window', localBudget: { maxUnits: 10, maxMs: '10s' } },
    perUser: { limit: 3, window: '1m', algorithm: 'fixed-window' },
    tenant: { limit: 100, window: '1m', algorithm: 'fixed-window', overrides: true, localBudget: { maxUnits: 10, maxMs: '10s' } },
    tenantSw: { limit: 100, window: '1m', algorithm: 'sliding-window', overrides: true, localBudget: { maxUnits: 10, maxMs: '10s' } },
  },
};
const ALGORITHMS = ['fw', 'sw', 'tb', 'gcra'] as const;

describe.each(['redis', 'cluster', 'redis via node-redis 6', 'redis via GLIDE'] satisfies StoreKind[])('local budgets on the %s store', (kind) => {
  const get = useStores(kind);
  let instances: RateLimitService[] = [];
  afterEach(async () => {
    for (const s of instances) {
      s.budgets?.clear(false);
      await s.budgets?.settled();
    }
    instances = [];
  });

  function instance(rules: RateLimitRulesConfig = RULES): RateLimitService {
    const { store, clock, prefix } = get();
    const service = new RateLimitService(store, new RateLimitPolicies(rules), validateModuleOptions({ clock: clock.now, keyPrefix: prefix }));
    instances.push(service);
    return service;
  }

  /** Consumes `times` units one by one on `service`, letting each take land; returns how many were admitted. */
  async function consume(service: RateLimitService, rule: string, key: string, times: number): Promise<number> {
    let admitted = 0;
    for (let i = 0; i < times; i++) {
      if ((await service.consume(key, rule)).allowed) admitted++;
      await service.budgets!.settled();
    }
    return admitted;
  }

  /** What the store counts for the key: the limit less what a peek of 0 units says remains. */
  async function counted(rule: string, key: string): Promise<number> {
    const peeker = instance();
    const decision = await peeker.peek(key, rule, 0);
    return decision.limit - decision.remaining;
  }

  it('decides a cold key exactly: a few requests per period take nothing ahead', async () => {
    const a = instance();
    const { clock } = get();
    for (let i = 0; i < 5; i++) {
      expect(await consume(a, 'fw', 'cold', 2)).toBe(2);
      clock.advance(2_000);
    }
    expect(await counted('fw', 'cold')).toBe(10);
    expect(a.budgets!.size).toBe(1);
  });

  it.each(ALGORITHMS)('takes units ahead for a hot key and spends them with no store call (%s)', async (rule) => {
    const a = instance();
    // Warm: the key becomes hot, and a take lands.
    expect(await consume(a, rule, 'hot', 10)).toBe(10);
    const before = await counted(rule, 'hot');
    expect(before).toBeGreaterThan(10); // units taken ahead are counted in the store already
    // Spent locally: the store's count does not move while units are at hand.
    const decision = await a.consume('hot', rule);
    expect(decision).toMatchObject({ allowed: true, retryAfterMs: 0 });
    expect(await counted(rule, 'hot')).toBe(before);
  });

  it.each(ALGORITHMS)('gives back what it did not spend: then the store counts exactly what was admitted (%s)', async (rule) => {
    const a = instance();
    const b = instance();
    const admitted = (await consume(a, rule, 'shared', 37)) + (await consume(b, rule, 'shared', 23));
    expect(admitted).toBe(60);
    a.budgets!.clear();
    b.budgets!.clear();
    await a.budgets!.settled();
    await b.budgets!.settled();
    expect(await counted(rule, 'shared')).toBe(60);
  });

  it('never admits more than the limit across instances, and refuses only while the others hold units', async () => {
    const services = [instance(), instance(), instance()];
    // 3 instances, limit 50, takes of up to 10: interleaved until all refuse.
    const admitted = [0, 0, 0];
    for (let round = 0; round < 40; round++) {
      for (let i = 0; i < services.length; i++) {
        if ((await services[i].consume('global', 'small')).allowed) admitted[i]++;
        await services[i].budgets!.settled();
      }
    }
    const total = admitted.reduce((a, b) => a + b, 0);
    expect(total).toBeLessThanOrEqual(50);
    // Units held and not spent are at most 10 per instance; the last refusals came while 2 others held some.
    expect(total).toBeGreaterThanOrEqual(50 - 3 * 10);
    for (const s of services) s.budgets!.clear();
    for (const s of services) await s.budgets!.settled();
    expect(await counted('small', 'global')).toBe(total);
    // Once given back, what the others held is admitted again.
    expect(await consume(services[0], 'small', 'global', 50 - total)).toBe(50 - total);
  });

  it("stops spending a fixed window's units when their window ends, and gives none back into the next", async () => {
    const a = instance();
    const { clock } = get();
    // 1 s before the window ends.
    clock.set(clock.ms - (clock.ms % 60_000) + 59_000);
    expect(await consume(a, 'fw', 'edge', 10)).toBe(10);
    const held = (await counted('fw', 'edge')) - 10;
    expect(held).toBeGreaterThan(0);
    clock.advance(1_000); // the next window
    // Nothing is spent from the last window's take: this request is decided by the store, in the new window (after the
    // key's next take, which went out first).
    expect(await a.consume('edge', 'fw')).toMatchObject({ allowed: true });
    a.budgets!.clear();
    await a.budgets!.settled();
    // The give-back of the old take found its window over: the new window counts only its own request.
    expect(await counted('fw', 'edge')).toBe(1);
  });

  it("gives a sliding window's units back only within the cell that counted them", async () => {
    const a = instance();
    const { clock } = get();
    expect(await consume(a, 'sw', 'cells', 10)).toBe(10);
    const held = (await counted('sw', 'cells')) - 10;
    expect(held).toBeGreaterThan(0);
    clock.advance(10_000); // the next cell (6 cells of 10 s)
    a.budgets!.clear();
    await a.budgets!.settled();
    // Too late to give back: the units stay counted until their cell leaves the window.
    expect(await counted('sw', 'cells')).toBe(10 + held);
  });

  it('charges a stacked rule decided exactly only if the local one admits, and keeps local units when the other refuses', async () => {
    const a = instance();
    expect(await consume(a, 'fw', 'api', 10)).toBe(10);
    const held = await counted('fw', 'api');
    const entries = (user: string) => [
      { key: 'api', rule: 'fw' },
      { key: user, rule: 'perUser' },
    ];
    const results = [];
    for (let i = 0; i < 4; i++) results.push(await a.consumeAll(entries('alice')));
    expect(results.map((r) => r.allowed)).toEqual([true, true, true, false]);
    expect(results[3].decisions[0].allowed).toBe(true); // the global rule would have admitted
    expect(await counted('fw', 'api')).toBe(held); // all spent locally
    a.budgets!.clear();
    await a.budgets!.settled();
    expect(await counted('fw', 'api')).toBe(13);
  });

  it('takes nothing ahead under a rule changed since: a take never outlives its rule', async () => {
    const a = instance();
    expect(await consume(a, 'fw', 'reload', 10)).toBe(10);
    const policies = (a as unknown as { policies: RateLimitPolicies }).policies;
    policies.replaceFromConfig({ rules: { ...RULES.rules, fw: { limit: 500, window: '1m', algorithm: 'fixed-window', localBudget: { maxUnits: 20, maxMs: '1s' } } } });
    const decision = await a.consume('reload', 'fw');
    expect(decision.limit).toBe(500);
    await a.budgets!.settled();
    // The old take's leftover went back when the rules changed: the store counts the 11 admitted, and no more than
    // the new take.
    expect(await counted('fw', 'reload')).toBeLessThanOrEqual(11 + 20);
  });

  it("takes a tracker's units under its override's limit, and reports that limit from units at hand", async () => {
    const a = instance();
    await a.overrides.set('tenant', 'acme', { limit: 20, ttlMs: '1h' });
    expect(await consume(a, 'tenant', 'acme', 25)).toBe(20);
    const local = await a.consume('other', 'tenant');
    expect(local.limit).toBe(100);
    expect(await consume(a, 'tenant', 'other', 10)).toBe(10);
    expect((await a.consume('other', 'tenant')).limit).toBe(100);
    a.budgets!.clear();
    await a.budgets!.settled();
    expect(await counted('tenant', 'acme')).toBe(20);
  });

  it.each(['tenant', 'tenantSw'])('admits exactly an override cut below its takes, and takes no more than it (%s)', async (rule) => {
    const a = instance();
    await a.overrides.set(rule, 'tiny', { limit: 3, ttlMs: '1h' });
    // Takes of 8 meet a limit of 3 (the sliding window's script once failed on that, its key empty).
    expect(await consume(a, rule, 'tiny', 12)).toBe(3);
    a.budgets!.clear();
    await a.budgets!.settled();
    expect(await counted(rule, 'tiny')).toBe(3);
  });

  it('forgets a key it resets, with its units', async () => {
    const a = instance();
    expect(await consume(a, 'tb', 'login', 10)).toBe(10);
    await a.reset('login', 'tb');
    expect(await counted('tb', 'login')).toBe(0);
    expect(await a.consume('login', 'tb')).toMatchObject({ allowed: true, remaining: 999 });
  });
});

describe('local budgets on the memory store', () => {
  const get = useStores('memory');

  it('are not taken: the memory store decides in the process anyway', async () => {
    const { store, clock, prefix } = get();
    const service = new RateLimitService(store, new RateLimitPolicies(RULES), validateModuleOptions({ clock: clock.now, keyPrefix: prefix }));
    expect(service.budgets).toBeUndefined();
    for (let i = 0; i < 20; i++) expect((await service.consume('k', 'fw')).remaining).toBe(999 - i);
  });
});
