import type { Cluster, Redis } from 'ioredis';
import { defineRule, RedisStore, type RedisClientLike } from '../../lib/index.js';
import { openClusterClient, type OpenClient } from '../support/redis-clients.js';
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

describe('RedisStore on a 3-master Redis Cluster through a GLIDE cluster client, with function libraries', () => {
  // GLIDE shows no slot table, so the adapter loads a library on every primary at once, and calls by FCALL after.
  let redis: TestRedisCluster;
  let admin: Cluster;
  let opened: OpenClient;
  beforeAll(async () => {
    redis = await startRedisCluster({ masters: 3 });
    admin = redis.cluster();
    await clusterReady(admin);
    opened = await openClusterClient('GLIDE', redis.nodes);
  }, HOOK_TIMEOUT_MS);
  afterAll(async () => {
    await opened?.close();
    await redis?.stop();
  }, HOOK_TIMEOUT_MS);

  const masters = (): Redis[] => admin.nodes('master');
  const libraries = (node: Redis) => node.call('FUNCTION', 'LIST') as Promise<unknown[]>;
  const store = () => new RedisStore(opened.client as RedisClientLike, { keyPrefix: uniquePrefix() });
  const trackers = Array.from({ length: TRACKERS }, (_, i) => `t${i}`);

  /** Consumes once per tracker, one call at a time, until every master decided by FCALL only; each decision exact. */
  async function untilFcallOnly(limited: RedisStore, used: Map<string, number>): Promise<void> {
    for (let round = 0; round < 200; round++) {
      await Promise.all(masters().map((node) => node.config('RESETSTAT')));
      for (const tracker of trackers) {
        used.set(tracker, (used.get(tracker) ?? 0) + 1);
        expect((await limited.consume(tracker, RULE)).remaining).toBe(1_000 - used.get(tracker)!);
      }
      const infos = await Promise.all(masters().map((node) => node.info('commandstats')));
      if (infos.every((info) => commandCalls(info, 'evalsha') === 0 && commandCalls(info, 'eval') === 0 && commandCalls(info, 'fcall') > 0)) return;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    throw new Error('some master still ran scripts by EVAL or EVALSHA');
  }

  it('loads the library on every primary at once, then decides there by FCALL only, exactly', async () => {
    await untilFcallOnly(store(), new Map());
    expect((await Promise.all(masters().map(libraries))).map((list) => list.length)).toEqual([1, 1, 1]);
  });

  it('resends as EVAL the calls a primary answers "Function not found" (FUNCTION FLUSH), counting each once, and loads the library again', async () => {
    const limited = store();
    const used = new Map<string, number>();
    await untilFcallOnly(limited, used);
    await masters()[0].call('FUNCTION', 'FLUSH');
    await untilFcallOnly(limited, used);
    expect((await Promise.all(masters().map(libraries))).map((list) => list.length)).toEqual([1, 1, 1]);
  });
});
