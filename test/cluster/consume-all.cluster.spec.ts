import calculateSlot from 'cluster-key-slot';
import type { Cluster, Redis } from 'ioredis';
import { defineRule, RedisStore, ruleKeys, type RateLimitAlgorithm, type RateLimitRule, type RuleKey } from '../../lib/index.js';
import { ManualClock } from '../support/manual.clock.js';
import { clusterReady, startRedisCluster, type TestRedisCluster } from '../support/redis-cluster.js';
import { uniquePrefix } from '../support/redis-server.js';

const ALGORITHMS: RateLimitAlgorithm[] = ['sliding-log', 'sliding-window', 'fixed-window', 'token-bucket', 'gcra'];
const HOOK_TIMEOUT_MS = 60_000;

describe('RedisStore on a real 3-master Redis Cluster', () => {
  let redis: TestRedisCluster;
  let client: Cluster;
  let clock: ManualClock;
  let prefix: string;
  let store: RedisStore;

  beforeAll(async () => {
    redis = await startRedisCluster({ masters: 3 });
    client = redis.cluster();
    await clusterReady(client);
  }, HOOK_TIMEOUT_MS);
  afterAll(async () => {
    await redis?.stop();
  }, HOOK_TIMEOUT_MS);
  beforeEach(() => {
    clock = new ManualClock();
    prefix = uniquePrefix();
    store = new RedisStore(client, { keyPrefix: prefix, clock: clock.now });
  });

  /** The master ("host:port") that serves a key, from the client's slot table (CLUSTER SLOTS). */
  const masterOf = (key: string): string => client.slots[calculateSlot(key)][0];
  const stateKey = (rule: RateLimitRule, tracker: string) => ruleKeys(prefix, rule, tracker).state;
  const masterNode = (key: string): Redis => {
    const address = masterOf(key);
    const node = client.nodes('master').find((n) => `${n.options.host}:${n.options.port}` === address);
    if (!node) throw new Error(`No master connection for ${address} (slot ${calculateSlot(key)})`);
    return node;
  };
  /** Scripts run so far on all masters (EVAL + EVALSHA calls, from INFO commandstats). */
  async function scriptCalls(): Promise<number> {
    const infos = await Promise.all(client.nodes('master').map((n) => n.info('commandstats')));
    let total = 0;
    for (const info of infos) for (const m of info.matchAll(/^cmdstat_(?:eval|evalsha|fcall):calls=(\d+)/gm)) total += Number(m[1]);
    return total;
  }
  /** Trackers `<base>-<n>`, the i-th on the i-th master (round robin), so that they span every master. */
  function trackersOnDistinctMasters(base: string, count: number): string[] {
    const masters = [...new Set(client.slots.map((owners) => owners[0]))].sort();
    expect(masters).toHaveLength(3);
    const trackers: string[] = [];
    for (let n = 0; trackers.length < count; n++) {
      const tracker = `${base}-${n}`;
      if (masterOf(`{${tracker}}`) === masters[trackers.length % masters.length]) trackers.push(tracker);
    }
    return trackers;
  }

  it('has every slot served by one of the 3 masters', () => {
    expect(client.slots).toHaveLength(16384);
    expect(client.slots.every((owners) => Array.isArray(owners) && owners.length >= 1)).toBe(true);
    expect(new Set(client.slots.map((owners) => owners[0])).size).toBe(3);
    expect(client.nodes('master')).toHaveLength(3);
  });

  describe('every algorithm, with trackers on different masters', () => {
    let trackers: Record<RateLimitAlgorithm, string>;
    beforeAll(() => {
      const picked = trackersOnDistinctMasters('user', ALGORITHMS.length);
      trackers = Object.fromEntries(ALGORITHMS.map((a, i) => [a, picked[i]])) as Record<RateLimitAlgorithm, string>;
    });

    it('places the trackers on at least 2 different masters', () => {
      const rules = ALGORITHMS.map((algorithm) => defineRule({ algorithm, limit: 5, window: '10s' }, algorithm));
      const masters = new Set(rules.map((rule) => masterOf(stateKey(rule, trackers[rule.algorithm]))));
      expect(masters.size).toBeGreaterThanOrEqual(2);
    });

    it.each(ALGORITHMS)('%s admits its limit and refuses the next, on the master owning its key', async (algorithm) => {
      const rule = defineRule({ algorithm, limit: 5, window: '10s' }, algorithm);
      const tracker = trackers[algorithm];
      for (let i = 0; i < 5; i++) {
        expect(await store.consume(tracker, rule)).toMatchObject({ allowed: true, remaining: 4 - i, retryAfterMs: 0, limit: 5 });
      }
      const refused = await store.consume(tracker, rule);
      expect(refused).toMatchObject({ allowed: false, remaining: 0 });
      expect(refused.retryAfterMs).toBeGreaterThan(0);
      const key = stateKey(rule, tracker);
      expect(await masterNode(key).exists(key)).toBe(1);
    });
  });

  describe('stacked rules of one tracker (SMS: 1/min, 5/h, 10/day)', () => {
    const minute = defineRule({ algorithm: 'sliding-log', limit: 1, window: '1m' }, 'sms-minute');
    const hour = defineRule({ algorithm: 'sliding-window', limit: 5, window: '1h', segments: 60 }, 'sms-hour');
    const day = defineRule({ algorithm: 'gcra', limit: 10, window: '1d' }, 'sms-day');
    const sms = (phone: string): RuleKey[] => [minute, hour, day].map((rule) => ({ key: phone, rule }));

    it('are decided all-or-nothing in one script: the hour rule refuses the 6th, the others keep their units', async () => {
      const phone = '+15550002';
      const slots = new Set([minute, hour, day].map((rule) => calculateSlot(stateKey(rule, phone))));
      expect(slots.size).toBe(1);
      for (let i = 0; i < 5; i++) {
        const before = await scriptCalls();
        expect((await store.consumeAll(sms(phone))).allowed).toBe(true);
        expect((await scriptCalls()) - before).toBe(1);
        clock.advance(61_000);
      }
      const before = await scriptCalls();
      const refused = await store.consumeAll(sms(phone));
      expect((await scriptCalls()) - before).toBe(1); // one script, no consume-then-refund fallback
      expect(refused.allowed).toBe(false);
      expect(refused.decisions.map((d) => d.allowed)).toEqual([true, false, true]);
      expect(await store.peek(phone, minute)).toMatchObject({ allowed: true, remaining: 0 });
      expect(await store.peek(phone, day, 0)).toMatchObject({ remaining: 5 });
    });
  });

  describe('rules of different trackers on different slots (the non-atomic fallback)', () => {
    const perIp = defineRule({ algorithm: 'fixed-window', limit: 2, window: '1m' }, 'ip');
    const perUser = defineRule({ algorithm: 'token-bucket', limit: 1, window: '1m' }, 'user');
    let ip: string;
    let users: string[];
    beforeAll(() => {
      [ip, ...users] = trackersOnDistinctMasters('t', 3);
    });
    const login = (user: string) => store.consumeAll([{ key: ip, rule: perIp }, { key: user, rule: perUser }]);

    it('refunds the first rule when the second refuses, and reports the second as the refusal', async () => {
      const [alice, bob] = users;
      expect(calculateSlot(stateKey(perIp, ip))).not.toBe(calculateSlot(stateKey(perUser, alice)));
      expect(calculateSlot(stateKey(perIp, ip))).not.toBe(calculateSlot(stateKey(perUser, bob)));
      expect(masterOf(stateKey(perIp, ip))).not.toBe(masterOf(stateKey(perUser, alice)));

      expect(await login(alice)).toMatchObject({ allowed: true, decisions: [{ allowed: true, remaining: 1 }, { allowed: true, remaining: 0 }] });

      const before = await scriptCalls();
      const refused = await login(alice);
      expect((await scriptCalls()) - before).toBe(3); // consume ip, consume alice (refused), refund ip
      expect(refused.allowed).toBe(false);
      expect(refused.decisions.map((d) => d.allowed)).toEqual([true, false]);
      expect(refused.decisions[1].retryAfterMs).toBeGreaterThan(0);

      // The ip rule's unit came back: one left, and bob can use it.
      expect(await store.peek(ip, perIp, 0)).toMatchObject({ remaining: 1 });
      expect(await store.peek(ip, perIp)).toMatchObject({ allowed: true, remaining: 0 });
      expect(await login(bob)).toMatchObject({ allowed: true, decisions: [{ allowed: true, remaining: 0 }, { allowed: true }] });
    });

    it('consumes nothing from the later rules when the first refuses', async () => {
      const [alice, bob, carol] = [...users, `${users[0]}-c`];
      expect(calculateSlot(stateKey(perIp, ip))).not.toBe(calculateSlot(stateKey(perUser, carol)));
      expect((await login(alice)).allowed).toBe(true);
      expect((await login(bob)).allowed).toBe(true);
      const refused = await login(carol);
      expect(refused.allowed).toBe(false);
      expect(refused.decisions.map((d) => d.allowed)).toEqual([false, true]);
      expect(await store.peek(carol, perUser)).toMatchObject({ allowed: true, remaining: 0 });
      expect(await masterNode(stateKey(perUser, carol)).exists(stateKey(perUser, carol))).toBe(0);
    });
  });

  it('keeps a lockout (blockMs) on the cluster, in the state key\'s slot', async () => {
    const strict = defineRule({ algorithm: 'fixed-window', limit: 1, window: '1m', blockMs: '1h' }, 'strict');
    const tracker = 'locked-out';
    const keys = ruleKeys(prefix, strict, tracker);
    expect(calculateSlot(keys.block)).toBe(calculateSlot(keys.state));

    expect((await store.consume(tracker, strict)).allowed).toBe(true);
    expect(await store.consume(tracker, strict)).toMatchObject({ allowed: false, retryAfterMs: 3_600_000 });
    expect(await masterNode(keys.block).exists(keys.block)).toBe(1);

    clock.advance(61_000); // the window is over, the lockout is not
    expect(await store.consume(tracker, strict)).toMatchObject({ allowed: false, retryAfterMs: 3_600_000 - 61_000 });
    clock.advance(3_600_000 - 61_000);
    expect((await store.consume(tracker, strict)).allowed).toBe(true);
  });

  it('keeps working after SCRIPT FLUSH on every master between two calls', async () => {
    const trackers = trackersOnDistinctMasters('flush', 3);
    const rule = defineRule({ algorithm: 'sliding-window', limit: 2, window: '1m' }, 'flush');
    const a = defineRule({ algorithm: 'sliding-log', limit: 2, window: '1m' }, 'a');
    const b = defineRule({ algorithm: 'gcra', limit: 2, window: '1m' }, 'b');
    for (const tracker of trackers) {
      expect((await store.consume(tracker, rule)).allowed).toBe(true);
      expect((await store.consumeAll([{ key: tracker, rule: a }, { key: tracker, rule: b }])).allowed).toBe(true);
    }
    const crossSlot = (i: number) => store.consumeAll([{ key: trackers[i], rule: a }, { key: trackers[(i + 1) % 3], rule: b }]);

    await Promise.all(client.nodes('master').map((n) => n.script('FLUSH')));

    for (const tracker of trackers) {
      expect(await store.consume(tracker, rule)).toMatchObject({ allowed: true, remaining: 0 });
    }
    await Promise.all(client.nodes('master').map((n) => n.script('FLUSH')));
    for (const tracker of trackers) {
      expect(await store.consumeAll([{ key: tracker, rule: a }, { key: tracker, rule: b }])).toMatchObject({ allowed: true, decisions: [{ remaining: 0 }, { remaining: 0 }] });
    }
    // Each tracker has used both units of a and b: the fallback refuses and refunds nothing it did not take.
    await Promise.all(client.nodes('master').map((n) => n.script('FLUSH')));
    expect(await crossSlot(0)).toMatchObject({ allowed: false, decisions: [{ allowed: false }, { allowed: false }] });
  });
});
