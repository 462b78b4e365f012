/**
 * The module on a real 3-master Redis Cluster, with `store: { cluster: nodes }` (the module creates, connects and
 * closes the Cluster client). The store conformance suites (test/conformance/*) and the property tests also run on
 * a cluster: `STORE_KINDS` in test/support/stores.ts includes 'cluster'.
 */
import { Controller, HttpCode, Post, type INestApplication } from '@nestjs/common';
import type { Cluster } from 'ioredis';
import request from 'supertest';
import {
  RATE_LIMIT_STORE,
  RateLimit,
  RateLimitModule,
  RateLimitService,
  RedisStore,
  ResilientStore,
  safeClientOptions,
  type RateLimitDecisionEvent,
  type RateLimitModuleOptions,
} from '../../lib/index.js';
import { startApp } from '../e2e/support/http-app.js';
import { ManualClock } from '../support/manual.clock.js';
import { clusterReady, startRedisCluster, type TestRedisCluster } from '../support/redis-cluster.js';
import { uniquePrefix } from '../support/redis-server.js';

const HOOK_TIMEOUT_MS = 60_000;

/** `promise`, or a clear failure after `ms`. */
function within<T>(ms: number, promise: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`Timed out after ${ms} ms waiting for ${what}`)), ms)));
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
const byPhone = { key: 'header:x-phone', shared: true } as const;
const SMS_MINUTE = { name: 'sms-minute', limit: 1, window: '1m', algorithm: 'sliding-log' } as const;
const SMS_HOUR = { name: 'sms-hour', limit: 5, window: '1h', algorithm: 'sliding-window', segments: 60 } as const;
const SMS_DAY = { name: 'sms-day', limit: 10, window: '1d', algorithm: 'gcra' } as const;
const BURST_SMALL = { name: 'burst-small', limit: 3, window: '1h', algorithm: 'fixed-window' } as const;
const BURST_LARGE = { name: 'burst-large', limit: 5, window: '1h', algorithm: 'token-bucket' } as const;

@Controller('sms')
class SmsController {
  // Per phone: 1 per minute, 5 per hour, 10 per day, all-or-nothing.
  @Post('send')
  @HttpCode(202)
  @RateLimit({ ...SMS_MINUTE, ...byPhone })
  @RateLimit({ ...SMS_HOUR, ...byPhone })
  @RateLimit({ ...SMS_DAY, ...byPhone })
  send() {
    return { queued: true };
  }

  @Post('burst')
  @HttpCode(202)
  @RateLimit({ ...BURST_SMALL, ...byPhone })
  @RateLimit({ ...BURST_LARGE, ...byPhone })
  burst() {
    return { queued: true };
  }
}

interface ClusterApp {
  app: INestApplication;
  clock: ManualClock;
  service: RateLimitService;
  /** The Cluster client the module created. */
  client: Cluster;
  /** The connection name of the module's connections (CLIENT LIST on the masters). */
  connectionName: string;
  /** Every decision the module made. */
  events: RateLimitDecisionEvent[];
  post: (path: string, phone: string) => request.Test;
}

describe('RateLimitModule with store { cluster: nodes } on a real 3-master Redis Cluster (Express)', () => {
  let redis: TestRedisCluster;
  let admin: Cluster;
  const apps: INestApplication[] = [];

  beforeAll(async () => {
    redis = await startRedisCluster({ masters: 3 });
    admin = redis.cluster();
    await clusterReady(admin);
  }, HOOK_TIMEOUT_MS);
  afterEach(async () => {
    await Promise.all(apps.splice(0).map((app) => app.close()));
  });
  afterAll(async () => {
    await redis?.stop();
  }, HOOK_TIMEOUT_MS);

  async function startClusterApp(options: RateLimitModuleOptions = {}): Promise<ClusterApp> {
    const clock = new ManualClock();
    const connectionName = uniquePrefix('conn');
    const events: RateLimitDecisionEvent[] = [];
    const app = await startApp('express', {
      imports: [
        RateLimitModule.forRoot({
          store: { cluster: redis.nodes, options: { redisOptions: { connectionName } } },
          globalGuard: true,
          keyPrefix: uniquePrefix(),
          clock: clock.now,
          // A failure of the cluster would show as a refusal marked degraded, never as a silent admission.
          failurePolicy: 'closed',
          // Generous: this tests atomicity, not latency on a loaded CI machine.
          timeoutMs: 2_000,
          onDecision: (event) => events.push(event),
          ...options,
        }),
      ],
      controllers: [SmsController],
    });
    apps.push(app);
    const store = app.get<ResilientStore>(RATE_LIMIT_STORE);
    const client = (store.primary as RedisStore).client as Cluster;
    await clusterReady(client);
    const post = (path: string, phone: string) => request(app.getHttpServer()).post(path).set('x-phone', phone);
    return { app, clock, service: app.get(RateLimitService), client, connectionName, events, post };
  }

  /** Scripts run so far on all masters (EVAL + EVALSHA calls, from INFO commandstats). */
  async function scriptCalls(): Promise<number> {
    const infos = await Promise.all(admin.nodes('master').map((n) => n.info('commandstats')));
    let total = 0;
    for (const info of infos) for (const m of info.matchAll(/^cmdstat_(?:eval|evalsha|fcall):calls=(\d+)/gm)) total += Number(m[1]);
    return total;
  }
  /** Connections named `name` on each master. */
  async function connectionsNamed(name: string): Promise<number[]> {
    const lists = await Promise.all(admin.nodes('master').map((n) => n.client('LIST') as Promise<string>));
    return lists.map((list) => list.split('\n').filter((line) => line.includes(` name=${name} `)).length);
  }
  const degraded = (events: RateLimitDecisionEvent[]) => events.filter((e) => e.result.decisions.some((d) => d.degraded)).length;

  it('decides the stacked SMS rules of one phone in one script, all-or-nothing: the hour rule refuses the 6th and the others keep their units', async () => {
    const { post, clock, service, events } = await startClusterApp();
    const phone = '+15550100';
    for (let i = 0; i < 5; i++) {
      const before = await scriptCalls();
      await post('/sms/send', phone).expect(202);
      expect((await scriptCalls()) - before).toBe(1);
      clock.advance(61_000);
    }
    const before = await scriptCalls();
    const refused = await post('/sms/send', phone).expect(429);
    expect((await scriptCalls()) - before).toBe(1); // one script on one master, no consume-then-refund fallback
    expect(refused.headers['retry-after']).toBeDefined();

    const last = events.at(-1)!;
    expect(last.result.decisions.map((d) => d.allowed)).toEqual([true, false, true]);
    const key = last.entries[0].key;
    expect(last.entries.map((e) => e.key)).toEqual([key, key, key]);
    expect(await service.peek(key, SMS_MINUTE)).toMatchObject({ allowed: true, remaining: 0 });
    expect(await service.peek(key, SMS_DAY, 0)).toMatchObject({ remaining: 5 });
    expect(degraded(events)).toBe(0);
  });

  it('admits exactly the smallest limit of stacked rules under 20 concurrent requests, and charges the refused ones nothing', async () => {
    const { post, service, events } = await startClusterApp();
    const phone = '+15550200';
    const statuses = await Promise.all(Array.from({ length: 20 }, () => post('/sms/burst', phone).then((res) => res.status)));
    expect(statuses.filter((s) => s === 202)).toHaveLength(3);
    expect(statuses.filter((s) => s === 429)).toHaveLength(17);
    expect(degraded(events)).toBe(0);
    const key = events[0].entries[0].key;
    // 3 admitted of 5: the 17 refused requests took nothing from the larger rule.
    expect(await service.peek(key, BURST_LARGE, 0)).toMatchObject({ remaining: 2 });
    expect(await service.peek(key, BURST_SMALL, 0)).toMatchObject({ remaining: 0 });
  });

  it('connects to every master at start-up, so that the first concurrent requests after it are decided on the cluster, none by the failure policy', async () => {
    const { post, events, client } = await startClusterApp();
    // Without those connections, a first command finding its master's still opening is put off by
    // retryDelayOnFailover (100 ms): past the default timeoutMs of 50 ms. The connections are what the code promises;
    // 50 ms for 30 concurrent requests is what a loaded machine may not keep, so the burst runs on the suite's timeout.
    expect(client.nodes('master').map((node) => node.status)).toEqual(['ready', 'ready', 'ready']);
    // 30 phones: their slots are spread over the 3 masters, none of which the app has sent a command to yet.
    const statuses = await Promise.all(Array.from({ length: 30 }, (_, i) => post('/sms/burst', `+1555030${String(i).padStart(2, '0')}`).then((res) => res.status)));
    expect(statuses).toEqual(Array(30).fill(202));
    expect(degraded(events)).toBe(0);
  });

  it('creates its Cluster client with the safe settings: no offline queue, no retries or resends, the module\'s timeouts', async () => {
    const { client } = await startClusterApp({ timeoutMs: 750 });
    expect(client.isCluster).toBe(true);
    expect(client.options.enableOfflineQueue).toBe(false);
    const { commandTimeout, connectTimeout } = safeClientOptions(750);
    expect(client.options.redisOptions).toMatchObject({ maxRetriesPerRequest: 0, autoResendUnfulfilledCommands: false, commandTimeout, connectTimeout });
    expect(client.nodes('master')).toHaveLength(3);
  });

  it('closes the Cluster client it created, and its connection to every master, on app.close()', async () => {
    const started = await startClusterApp();
    await started.post('/sms/send', '+15550300').expect(202); // a connection to the master owning the phone's slot
    expect(started.client.status).toBe('ready');
    expect((await connectionsNamed(started.connectionName)).reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(1);

    const ended = new Promise<void>((resolve) => started.client.once('end', () => resolve()));
    await started.app.close();
    apps.splice(apps.indexOf(started.app), 1);
    // app.close() returns once every master has answered QUIT; the sockets then close ('end' follows).
    expect(['disconnecting', 'close', 'end']).toContain(started.client.status);
    await within(2_000, ended, 'the Cluster client to emit "end" after app.close()');
    expect(started.client.status).toBe('end');
    const deadline = Date.now() + 2_000;
    let open = await connectionsNamed(started.connectionName);
    while (open.some((n) => n > 0) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      open = await connectionsNamed(started.connectionName);
    }
    expect(open).toEqual([0, 0, 0]);
  });
});
