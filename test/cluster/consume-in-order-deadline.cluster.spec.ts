import calculateSlot from 'cluster-key-slot';
import type { Cluster } from 'ioredis';
import { defineRule, RateLimitDeadlineError, RedisStore } from '../../lib/index.js';
import { clusterReady, startRedisCluster, type TestRedisCluster } from '../support/redis-cluster.js';
import { uniquePrefix } from '../support/redis-server.js';

const HOOK_TIMEOUT_MS = 60_000;

// On a Cluster, rules whose trackers live on different masters are consumed one by one (consumeInOrder). A later
// rule that fails must not leave the earlier ones' units counted for a call nobody was admitted by.
describe('consumeAll across masters when a later master answers after the deadline', () => {
  let redis: TestRedisCluster;
  let client: Cluster;
  beforeAll(async () => {
    redis = await startRedisCluster({ masters: 3 });
    client = redis.cluster();
    await clusterReady(client);
  }, HOOK_TIMEOUT_MS);
  afterAll(async () => {
    for (const p of redis?.processes ?? []) p.kill('SIGCONT');
    await redis?.stop();
  }, HOOK_TIMEOUT_MS);

  const first = defineRule({ algorithm: 'sliding-window', limit: 10, window: '1m' }, 'first');
  const second = defineRule({ algorithm: 'sliding-window', limit: 10, window: '1m' }, 'second');
  const masterPort = (tracker: string) => Number(client.slots[calculateSlot(`{${tracker}}`)][0].split(':')[1]);
  /** A tracker served by a master other than `otherThan`'s. */
  function trackerApartFrom(otherThan: string): string {
    for (let n = 0; ; n++) if (masterPort(`t-${n}`) !== masterPort(otherThan)) return `t-${n}`;
  }

  it('gives back what the earlier rules took, then throws RateLimitDeadlineError', async () => {
    const store = new RedisStore(client, { keyPrefix: uniquePrefix(), timeoutMs: 50 });
    const a = 'a-0';
    const b = trackerApartFrom(a);
    // Measures Redis's clock, so that calls carry deadlines.
    await store.peek(a, first);
    await store.peek(b, second);
    const stalled = redis.processes[redis.ports.indexOf(masterPort(b))];
    stalled.kill('SIGSTOP');
    const call = store.consumeAll([{ key: a, rule: first }, { key: b, rule: second }]);
    // The stalled master's clock must pass the deadline: real time, there is no clock to move.
    await new Promise((resolve) => setTimeout(resolve, 150));
    stalled.kill('SIGCONT');
    await expect(call).rejects.toBeInstanceOf(RateLimitDeadlineError);
    // peek answers as a consume would: 9 left after one more means nothing stayed counted.
    expect(await store.peek(a, first)).toMatchObject({ remaining: 9 });
  });
});
