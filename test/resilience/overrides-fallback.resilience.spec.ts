import type { Redis } from 'ioredis';
import { MemoryStore, RedisStore, ResilientStore, defineRule, type MultiDecision, type RateLimitModuleOptions } from '../../lib/index.js';
import { commandCalls, startRedis, uniquePrefix, type TestRedis } from '../support/redis-server.js';
import { startResilientApp, waitFor, watchUnhandledRejections, type ResilientApp } from './support/resilient-app.js';

const RULE = { limit: 2, window: '1h', algorithm: 'fixed-window', key: 'header:x-client', overrides: true } as const;

// Overrides live in Redis, where the decisions' script applies them. While Redis is away and the failure policy
// 'memory' decides, the fallback applies its copy of them: refreshed from Redis while it answers, and written at once
// by the overrides this instance sets or removes. A raised limit stays raised and a blocked key stays blocked.
describe('the memory fallback applies the overrides Redis held', () => {
  let redis: TestRedis;
  let rejections: ReturnType<typeof watchUnhandledRejections>;
  const apps: ResilientApp[] = [];

  beforeAll(async () => {
    rejections = watchUnhandledRejections();
    redis = await startRedis({ own: true });
  });
  afterEach(async () => {
    redis.process!.kill('SIGCONT');
    for (const app of apps.splice(0)) await app.close();
  });
  afterAll(async () => {
    await redis?.stop();
    expect(rejections.seen).toEqual([]);
    rejections?.dispose();
  });

  /** Two instances on one key prefix, sharing the overrides; the failure policy 'memory', after 50 ms. */
  async function instances(): Promise<[ResilientApp, ResilientApp]> {
    const options: RateLimitModuleOptions = { keyPrefix: uniquePrefix('ovr'), failurePolicy: 'memory', timeoutMs: 50, defaultRule: RULE };
    const pair: [ResilientApp, ResilientApp] = [await startResilientApp(redis, options), await startResilientApp(redis, options)];
    apps.push(...pair);
    return pair;
  }

  const decide = (app: ResilientApp, key: string): Promise<MultiDecision> => app.service.decide([{ key, rule: app.service.rule('default') }]);
  const admitted = async (app: ResilientApp, key: string, times: number): Promise<boolean[]> => {
    const answers: boolean[] = [];
    for (let i = 0; i < times; i++) answers.push((await decide(app, key)).allowed);
    return answers;
  };

  /** Runs `during` with Redis stopped, every decision made by the fallback. */
  async function whileStalled<T>(during: () => Promise<T>): Promise<T> {
    redis.process!.kill('SIGSTOP');
    try {
      return await during();
    } finally {
      redis.process!.kill('SIGCONT');
    }
  }

  it('applies a raise and a block set on another instance, once it has refreshed its copy', async () => {
    const [a, b] = await instances();
    await a.service.overrides.set('default', 'big', { limit: 5, ttlMs: '1h' });
    await a.service.overrides.set('default', 'abuser', { block: true, ttlMs: '1h' });
    // The first decision of an overridable rule starts the copy; this waits for it.
    await decide(b, 'someone');
    await b.store.syncOverrides();

    const [big, abuser, plain] = await whileStalled(async () => [await admitted(b, 'big', 6), await decide(b, 'abuser'), await admitted(b, 'plain', 3)] as const);
    expect(big).toEqual([true, true, true, true, true, false]);
    expect(abuser.allowed).toBe(false);
    expect(abuser.decisions[0].degraded).toBe('memory');
    // The block's time left, about an hour, is the wait.
    expect(abuser.decisions[0].retryAfterMs).toBeGreaterThan(3_500_000);
    expect(plain).toEqual([true, true, false]);
  });

  it('applies at once an override this instance set, before any refresh', async () => {
    const [a] = await instances();
    await a.service.overrides.set('default', 'abuser', { block: true, ttlMs: '1h' });
    const during = await whileStalled(() => decide(a, 'abuser'));
    expect(during.allowed).toBe(false);
    expect(during.decisions[0].degraded).toBe('memory');
  });

  it('forgets an override removed on another instance at its next refresh', async () => {
    const [a, b] = await instances();
    await a.service.overrides.set('default', 'abuser', { block: true, ttlMs: '1h' });
    await decide(b, 'someone');
    await b.store.syncOverrides();
    await a.service.overrides.remove('default', 'abuser');
    await b.store.syncOverrides();
    expect(await whileStalled(() => admitted(b, 'abuser', 3))).toEqual([true, true, false]);
  });

  it('keeps its copy when a refresh fails, each override ending when it would have', async () => {
    const [a, b] = await instances();
    await a.service.overrides.set('default', 'big', { limit: 4, ttlMs: '1h' });
    await decide(b, 'someone');
    await b.store.syncOverrides();
    const during = await whileStalled(async () => {
      // Redis stopped: the circuit opens, and a refresh then lists nothing.
      await waitFor('the circuit to open', async () => (await decide(b, 'someone-else'), b.store.breaker.state === 'open'));
      await b.store.syncOverrides();
      return admitted(b, 'big', 5);
    });
    expect(during).toEqual([true, true, true, true, false]);
  });
});

describe('the fallback copy of the overrides, refreshed on its own', () => {
  let redis: TestRedis;
  let admin: Redis;

  beforeAll(async () => {
    redis = await startRedis({ own: true });
    admin = redis.client();
  });
  afterAll(async () => {
    admin?.disconnect();
    await redis?.stop();
  });

  it('lists the overrides again every overridesSyncMs once an overridable rule was decided, and never before', async () => {
    const keyPrefix = uniquePrefix('ovr');
    const client = redis.client();
    const writerClient = redis.client();
    const writer = new RedisStore(writerClient, { keyPrefix });
    const fallback = new MemoryStore({ keyPrefix });
    const store = new ResilientStore(new RedisStore(client, { keyPrefix }), fallback, { overridesSyncMs: 20 });
    const rule = defineRule({ limit: 2, window: '1h', algorithm: 'fixed-window', overrides: true }, 'default');
    try {
      await writer.overrides.set('default', 'big', { limit: 9, ttlMs: 3_600_000 });
      await store.consume('someone', defineRule({ limit: 2, window: '1h', algorithm: 'fixed-window' }, 'plain'));
      // No overridable rule decided yet: nothing listed.
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(await fallback.overrides.list()).toEqual([]);

      await store.consume('someone', rule);
      await waitFor('the first copy', async () => (await fallback.overrides.list()).length === 1);
      await writer.overrides.set('default', 'abuser', { ttlMs: 3_600_000 });
      await waitFor('a later copy', async () => (await fallback.overrides.list()).length === 2);
      expect(await fallback.overrides.list()).toMatchObject([
        { rule: 'default', key: 'big', limit: 9, block: false },
        { rule: 'default', key: 'abuser', block: true },
      ]);
    } finally {
      store.close();
      client.disconnect();
      writerClient.disconnect();
    }
  });

  it('reads again only the overrides that changed: a refresh of an unchanged set is one script call', async () => {
    const keyPrefix = uniquePrefix('ovr');
    const client = redis.client();
    const writer = new RedisStore(admin, { keyPrefix });
    const fallback = new MemoryStore({ keyPrefix });
    // Refreshed only when asked here: the timer's first turn is an hour away.
    const store = new ResilientStore(new RedisStore(client, { keyPrefix }), fallback, { overridesSyncMs: 3_600_000 });
    const rule = defineRule({ limit: 2, window: '1h', algorithm: 'fixed-window', overrides: true }, 'default');
    const scriptCalls = async () => {
      const stats = await admin.info('commandstats');
      return commandCalls(stats, 'evalsha') + commandCalls(stats, 'eval') + commandCalls(stats, 'fcall');
    };
    try {
      for (const key of ['a', 'b', 'c']) await writer.overrides.set('default', key, { limit: 9, ttlMs: 3_600_000 });
      await store.consume('someone', rule);
      await store.syncOverrides();
      expect(await fallback.overrides.list()).toHaveLength(3);

      await admin.config('RESETSTAT');
      for (let i = 0; i < 3; i++) await store.syncOverrides();
      expect(await scriptCalls()).toBe(3);

      await writer.overrides.set('default', 'b', { limit: 5, ttlMs: 3_600_000 });
      await writer.overrides.remove('default', 'c');
      await admin.config('RESETSTAT');
      await store.syncOverrides();
      // The index, and the one override that changed.
      expect(await scriptCalls()).toBe(2);
      expect((await fallback.overrides.list()).map(({ key, limit }) => ({ key, limit })).sort((x, y) => x.key.localeCompare(y.key))).toEqual([
        { key: 'a', limit: 9 },
        { key: 'b', limit: 5 },
      ]);
    } finally {
      store.close();
      client.disconnect();
    }
  });
});
