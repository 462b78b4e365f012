import type { Cluster, Redis } from 'ioredis';
import { defineRule, RedisStore } from '../../lib/index.js';
import { clusterReady, startRedisCluster, type TestRedisCluster } from '../support/redis-cluster.js';
import { commandCalls, uniquePrefix } from '../support/redis-server.js';

// On a Cluster, each master loads the function library of a script the first time the script runs there (FUNCTION
// LOAD to that node), and is called by FCALL after: the lone calls' script and the cross-slot one of coalesced
// batches that span slots of one master.
const HOOK_TIMEOUT_MS = 60_000;
const RULE = defineRule({ algorithm: 'sliding-window', limit: 1_000, window: '1h' }, 'fn');
const TRACKERS = 60;

describe('RedisStore on a 3-master Redis Cluster, with function libraries', () => {
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

  const masters = (): Redis[] => client.nodes('master');
  const stats = () => Promise.all(masters().map((node) => node.info('commandstats')));
  const libraries = async (node: Redis) => ((await node.call('FUNCTION', 'LIST')) as unknown[]).length;

  it('loads each script library on every master that runs it, then decides there by FCALL, exactly', async () => {
    const store = new RedisStore(client, { keyPrefix: uniquePrefix() });
    const trackers = Array.from({ length: TRACKERS }, (_, i) => `t${i}`);
    const used = new Map<string, number>();
    const consumed = (tracker: string) => {
      used.set(tracker, (used.get(tracker) ?? 0) + 1);
      return 1_000 - used.get(tracker)!;
    };
    // Lone calls (one at a time) and a coalesced turn (all trackers at once: one cross-slot call per master), until
    // every master has taken both kinds by FCALL.
    for (let round = 0; round < 200; round++) {
      await Promise.all(masters().map((node) => node.config('RESETSTAT')));
      for (const tracker of trackers) expect((await store.consume(tracker, RULE)).remaining).toBe(consumed(tracker));
      const together = await Promise.all(trackers.map((tracker) => store.consume(tracker, RULE)));
      expect(together.map((d) => d.remaining)).toEqual(trackers.map(consumed));
      const infos = await stats();
      if (infos.every((info) => commandCalls(info, 'evalsha') === 0 && commandCalls(info, 'eval') === 0 && commandCalls(info, 'fcall') > 0)) {
        // Every master holds the lone calls' library and the cross-slot one.
        expect(await Promise.all(masters().map(libraries))).toEqual([2, 2, 2]);
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    throw new Error('some master still ran scripts by EVAL or EVALSHA');
  });
});
