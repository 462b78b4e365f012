/**
 * The testing kit's `reset()` on a real 3-master Redis Cluster: SCAN sees one node's keys, so every primary is
 * scanned, through each client library's own way to reach it (ioredis / iovalkey `nodes('master')`, node-redis
 * `masters` and `nodeClient`, GLIDE's `allPrimaries` and `routeByAddress` routes).
 */
import type { INestApplication } from '@nestjs/common';
import type { Cluster } from 'ioredis';
import request from 'supertest';
import { RedisStore, type RedisClientLike } from '../../lib/index.js';
import { recognizeClient } from '../../lib/stores/redis/clients/client.recognizer.js';
import { RateLimitTesting, RateLimitTestingError } from '../../lib/testing/index.js';
import { kitModule, startKitApp } from '../e2e/testing-kit/kit-app.fixture.js';
import { CLIENT_LIBRARIES, openClusterClient, type ClientLibrary, type OpenClient } from '../support/redis-clients.js';
import { clusterReady, startRedisCluster, type TestRedisCluster } from '../support/redis-cluster.js';
import { uniquePrefix } from '../support/redis-server.js';
import { PATIENT_TIMEOUT_MS } from '../support/store-timeout.js';

const HOOK_TIMEOUT_MS = 60_000;

let redis: TestRedisCluster | undefined;
/** The test's own view of the cluster, to write and find keys on every node. */
let io: Cluster;
beforeAll(async () => {
  redis = await startRedisCluster({ masters: 3 });
  io = redis.cluster();
  await clusterReady(io);
}, HOOK_TIMEOUT_MS);
afterAll(async () => {
  await redis?.stop();
}, HOOK_TIMEOUT_MS);

/** The keys matching `pattern` on each primary, in the order of `io.nodes('master')`. */
function keysPerPrimary(pattern: string): Promise<string[][]> {
  return Promise.all(io.nodes('master').map((node) => node.keys(pattern)));
}

/** `count` keys under `prefix` in as many slots (hash tags), so that every primary holds some. */
async function writeKeys(prefix: string, count: number): Promise<void> {
  await Promise.all(Array.from({ length: count }, (_, i) => io.set(`${prefix}:default:{t${i}}`, '1')));
}

describe.each<'ioredis' | ClientLibrary>(['ioredis', ...CLIENT_LIBRARIES])('RateLimitTesting.reset() on a Redis Cluster through a %s client', (library) => {
  let app: INestApplication;
  let limits: RateLimitTesting;
  let opened: OpenClient | undefined;
  let keyPrefix: string;
  const items = () => request(app.getHttpServer()).get('/items');

  beforeAll(async () => {
    let client: RedisClientLike;
    if (library === 'ioredis') {
      client = redis!.cluster();
      await clusterReady(client as Cluster);
    } else {
      opened = await openClusterClient(library, redis!.nodes);
      client = opened.client;
    }
    keyPrefix = uniquePrefix('kit');
    app = await startKitApp('express', kitModule({ store: client, keyPrefix, timeoutMs: PATIENT_TIMEOUT_MS }));
    limits = RateLimitTesting.from(app);
  }, HOOK_TIMEOUT_MS);
  afterAll(async () => {
    await app?.close();
    await opened?.close();
  });

  it("erases every key under the module's keyPrefix on every primary, and no other key", async () => {
    await items().expect(200);
    await items().expect(200);
    await items().expect(429);
    await writeKeys(keyPrefix, 60);
    await io.set(`${keyPrefix}x:default:{other}`, '1');
    await io.set(`other:${keyPrefix}:default:{other}`, '1');
    const before = await keysPerPrimary(`${keyPrefix}:*`);
    // Keys on each of the three primaries: a reset that scanned one node would leave some.
    expect(before.map((keys) => keys.length > 0)).toEqual([true, true, true]);
    await limits.reset();
    expect(await keysPerPrimary(`${keyPrefix}:*`)).toEqual([[], [], []]);
    expect(await io.exists(`${keyPrefix}x:default:{other}`)).toBe(1);
    expect(await io.exists(`other:${keyPrefix}:default:{other}`)).toBe(1);
    // The client that was refused is counted afresh.
    await items().expect(200);
  });

  it('erases more keys than one SCAN page holds on each node', async () => {
    await writeKeys(keyPrefix, 4000);
    await limits.reset();
    expect(await keysPerPrimary(`${keyPrefix}:*`)).toEqual([[], [], []]);
  });
});

describe('RateLimitTesting.reset() on a Redis Cluster through a client port that cannot reach each primary', () => {
  let app: INestApplication;
  beforeAll(async () => {
    const cluster = redis!.cluster();
    await clusterReady(cluster);
    // A RedisStore on a client port of the app's own (`new RedisStore(port)`), without `primaries`.
    const port = Object.create(recognizeClient(cluster)!, { library: { value: 'my-port' }, primaries: { value: undefined } });
    app = await startKitApp('express', kitModule({ store: new RedisStore(port, { keyPrefix: uniquePrefix('kit'), timeoutMs: PATIENT_TIMEOUT_MS }) }));
  }, HOOK_TIMEOUT_MS);
  afterAll(async () => {
    await app?.close();
  });

  it('refuses with an error naming the library and what to do instead', async () => {
    const reset = RateLimitTesting.from(app).reset();
    await expect(reset).rejects.toThrow(RateLimitTestingError);
    await expect(reset).rejects.toThrow(
      'RateLimitTesting.reset() cannot reach each node of a Redis Cluster through a my-port client: on a Cluster with this client, give each test a key prefix of its own instead',
    );
  });
});
