import calculateSlot from 'cluster-key-slot';
import type { Cluster, Redis } from 'ioredis';
import { defineRule, MemoryStore, RedisStore, ruleKeys, type Decision, type MultiDecision, type RateLimitRule, type RateLimitStore } from '../../lib/index.js';
import { ManualClock } from '../support/manual.clock.js';
import { clusterReady, startRedisCluster, type TestRedisCluster } from '../support/redis-cluster.js';
import { uniquePrefix } from '../support/redis-server.js';

/**
 * The calls a coalescing RedisStore gets in one turn of the event loop go out as a batch, which on a Cluster is
 * split by node (redis.store.ts, dispatchByNode): one cross-slot script call per master, deciding calls whose keys
 * lie on many slots of that master. Each call must get the decision it would get alone, in order per key: the
 * memory store, given the same calls in the same order, is the reference.
 */
const HOOK_TIMEOUT_MS = 60_000;
const TRACKERS = 30;

const fixed = defineRule({ algorithm: 'fixed-window', limit: 3, window: '1m' }, 'fw');
const bucket = defineRule({ algorithm: 'token-bucket', limit: 2, window: '1m' }, 'tb');
const log = defineRule({ algorithm: 'sliding-log', limit: 2, window: '1m' }, 'sl');
const gcra = defineRule({ algorithm: 'gcra', limit: 2, window: '1m' }, 'gcra');
const sliding = defineRule({ algorithm: 'sliding-window', limit: 2, window: '1m' }, 'sw');

/** What one tracker's calls are, made one after the other in the same turn: more than each rule admits. */
function callsOf(store: RateLimitStore, tracker: string): Promise<Decision | MultiDecision>[] {
  return [
    store.consume(tracker, fixed),
    store.consumeAll([{ key: tracker, rule: bucket }, { key: tracker, rule: log }]),
    store.consume(tracker, fixed, 2),
    store.consume(tracker, sliding),
    store.consumeAll([{ key: tracker, rule: bucket }, { key: tracker, rule: log }]),
    store.peek(tracker, gcra, 2),
    store.consume(tracker, fixed),
    store.consume(tracker, gcra, 2),
    store.consumeAll([{ key: tracker, rule: bucket }, { key: tracker, rule: log }]),
    store.consume(tracker, sliding, 2),
  ];
}
const CALLS_PER_TRACKER = 10;
/** Units of `fixed` the calls above admit per tracker: 1, then 2 (3 of 3), then none. */
const FIXED_ADMITTED = 3;

describe('a coalesced batch on a 3-master Redis Cluster whose calls span slots', () => {
  let redis: TestRedisCluster;
  let client: Cluster;

  beforeAll(async () => {
    redis = await startRedisCluster({ masters: 3 });
    client = redis.cluster();
    await clusterReady(client);
  }, HOOK_TIMEOUT_MS);
  afterAll(async () => {
    await redis?.stop();
  }, HOOK_TIMEOUT_MS);

  const masterOf = (key: string): string => client.slots[calculateSlot(key)][0];
  const masterNode = (key: string): Redis => client.nodes('master').find((n) => `${n.options.host}:${n.options.port}` === masterOf(key))!;
  /** Script calls run so far on all masters (EVAL and EVALSHA, from INFO commandstats). */
  async function scriptCalls(): Promise<number> {
    const infos = await Promise.all(client.nodes('master').map((n) => n.info('commandstats')));
    let total = 0;
    for (const info of infos) for (const m of info.matchAll(/^cmdstat_(?:eval|evalsha|fcall):calls=(\d+)/gm)) total += Number(m[1]);
    return total;
  }

  /** Runs every tracker's calls in one turn on both stores (each on its own clock at the same instant). */
  async function inOneTurn(trackers: string[]) {
    const prefix = uniquePrefix();
    const redisClock = new ManualClock();
    const memoryClock = new ManualClock();
    const store = new RedisStore(client, { keyPrefix: prefix, clock: redisClock.now });
    const memory = new MemoryStore({ keyPrefix: prefix, clock: memoryClock.now });
    // The scripts loaded on every master first (a batch of other trackers), so that the count below is of this batch alone.
    await Promise.all(trackers.flatMap((tracker) => callsOf(store, `warm-${tracker}`)));
    const before = await scriptCalls();
    const onRedis = trackers.flatMap((tracker) => callsOf(store, tracker));
    const onMemory = trackers.flatMap((tracker) => callsOf(memory, tracker));
    const decided = { redis: await Promise.all(onRedis), memory: await Promise.all(onMemory) };
    return { ...decided, scripts: (await scriptCalls()) - before, prefix, at: redisClock.ms };
  }

  it('gives every call the memory store\'s decision, in a few script calls each covering many slots', async () => {
    const trackers = Array.from({ length: TRACKERS }, (_, i) => `batch-user-${i}`);
    const keys = trackers.map((t) => ruleKeys('p', fixed, t).state);
    // The trackers lie on many slots of every master: a node's part of the batch spans slots.
    const slotsPerMaster = new Map<string, Set<number>>();
    for (const key of keys) slotsPerMaster.set(masterOf(key), (slotsPerMaster.get(masterOf(key)) ?? new Set()).add(calculateSlot(key)));
    expect(slotsPerMaster.size).toBe(3);
    for (const slots of slotsPerMaster.values()) expect(slots.size).toBeGreaterThanOrEqual(3);

    const { redis: onRedis, memory: onMemory, scripts } = await inOneTurn(trackers);
    expect(onRedis).toEqual(onMemory);
    expect(onRedis.some((d) => d.allowed)).toBe(true);
    expect(onRedis.some((d) => !d.allowed)).toBe(true);
    // 300 calls: the first alone, the rest in batches of at most 64, each one script call per master. Sent one by
    // one (a cross-slot script that did not run, or no coalescing), they would be 300.
    const calls = TRACKERS * CALLS_PER_TRACKER;
    expect(scripts).toBeLessThanOrEqual(1 + Math.ceil((calls - 1) / 64) * 3);
  });

  it('leaves each tracker\'s fixed-window count in Redis at exactly the units admitted, on the master of its slot', async () => {
    const trackers = Array.from({ length: TRACKERS }, (_, i) => `count-user-${i}`);
    const { redis: onRedis, prefix, at } = await inOneTurn(trackers);
    const fixedAdmitted = (tracker: number) =>
      [0, 2, 6]
        .map((i) => onRedis[tracker * CALLS_PER_TRACKER + i] as Decision)
        .reduce((units, d, j) => units + (d.allowed ? [1, 2, 1][j] : 0), 0);
    const windowEndUs = (Math.floor(at / 60_000) + 1) * 60_000 * 1000;
    const counts = await Promise.all(
      trackers.map(async (tracker) => {
        const key = ruleKeys(prefix, fixed, tracker).state;
        // The counter holds the window's end (µs) plus the count (lua/fixed-window.lua).
        return Number(await masterNode(key).get(key)) - windowEndUs;
      }),
    );
    expect(trackers.map((_, i) => fixedAdmitted(i))).toEqual(trackers.map(() => FIXED_ADMITTED));
    expect(counts).toEqual(trackers.map(() => FIXED_ADMITTED));
  });

  it('refuses, after the batch, what the batch used up, as the memory store does', async () => {
    const trackers = Array.from({ length: TRACKERS }, (_, i) => `after-user-${i}`);
    const prefix = uniquePrefix();
    const clock = new ManualClock();
    const store = new RedisStore(client, { keyPrefix: prefix, clock: clock.now });
    const memory = new MemoryStore({ keyPrefix: prefix, clock: clock.now });
    const rules: RateLimitRule[] = [fixed, bucket, log, gcra, sliding];
    await Promise.all(trackers.flatMap((t) => callsOf(store, t)));
    await Promise.all(trackers.flatMap((t) => callsOf(memory, t)));
    const look = (s: RateLimitStore) => Promise.all(trackers.flatMap((t) => rules.map((rule) => s.peek(t, rule, 0))));
    expect(await look(store)).toEqual(await look(memory));
  });
});
