/**
 * The module on Redis Sentinel: `store: { sentinels, name }` (ioredis options, so the module creates the client
 * with its safe settings), and a Sentinel client of each other library that has one passed as `store`: node-redis 5
 * and 6 `createSentinel`, iovalkey `new Redis({ sentinels, name })`. GLIDE has no Sentinel support. Real processes:
 * for each client, a master and its replica (`--replicaof`); one Sentinel (quorum 1) monitors them all, so that
 * each suite fails its own master over. Decisions are on Redis's own clock, so each call carries a deadline: what
 * keeps a call that a node-redis Sentinel held across a failover from counting on the new master (under a custom
 * `clock` there is no deadline, and such calls count).
 */
import { Controller, HttpCode, Post, type INestApplication } from '@nestjs/common';
import { Redis } from 'ioredis';
import request from 'supertest';
import { RateLimit, RateLimitModule, type RateLimitDecisionEvent, type RateLimitModuleOptions } from '../../lib/index.js';
import { openSentinelClient, SENTINEL_LIBRARIES, type OpenClient, type SentinelLibrary } from '../support/redis-clients.js';
import { startApp } from '../e2e/support/http-app.js';
import { uniquePrefix } from '../support/redis-server.js';
import { startSentinelSetup, waitFor, type SentinelGroup, type SentinelSetup } from './sentinel.support.js';

const HOOK_TIMEOUT_MS = 30_000;
const FAILOVER_DEADLINE_MS = 15_000;

/** Runs `fn` on a short-lived connection to one server (none may outlive a server this test kills). */
async function onServer<T>(port: number, fn: (client: Redis) => Promise<T>): Promise<T> {
  const client = new Redis({ host: '127.0.0.1', port, lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  try {
    await client.connect();
    return await fn(client);
  } finally {
    client.disconnect();
  }
}

/** Script calls a server ran to the end (those answered NOSCRIPT or 'Function not found' left out) since its last CONFIG RESETSTAT. */
function scriptRuns(commandstats: string): number {
  let runs = 0;
  for (const command of ['evalsha', 'eval', 'fcall']) {
    const stats = new RegExp(`^cmdstat_${command}:calls=(\\d+).*?rejected_calls=(\\d+),failed_calls=(\\d+)`, 'm').exec(commandstats);
    if (stats) runs += Number(stats[1]) - Number(stats[3]);
  }
  return runs;
}

@Controller()
class MessagesController {
  @Post('send')
  @HttpCode(202)
  @RateLimit({ name: 'send', limit: 3, window: '1h', algorithm: 'sliding-log', key: 'header:x-user', shared: true })
  send() {
    return { sent: true };
  }
}

/** The client the module decides through: made by the module from ioredis options, or of a library, passed in. */
type SentinelClient = 'ioredis options' | SentinelLibrary;
const CLIENTS: SentinelClient[] = ['ioredis options', ...SENTINEL_LIBRARIES];
/** The Sentinel's name for the master of `client`'s suite. */
const masterName = (client: SentinelClient) => client.replace(/[^a-z0-9]/g, '');
/** Clients that hold calls while the master is gone and send them to the new one (see the failover test). */
const QUEUES_ACROSS_FAILOVER: SentinelClient[] = ['node-redis 5', 'node-redis 6'];

let setup: SentinelSetup;
beforeAll(async () => {
  setup = await startSentinelSetup(CLIENTS.map(masterName));
}, HOOK_TIMEOUT_MS);
afterAll(async () => {
  await setup?.stop();
}, HOOK_TIMEOUT_MS);

describe.each(CLIENTS)('RateLimitModule on Redis Sentinel through %s', (client) => {
  let group: SentinelGroup;
  const apps: INestApplication[] = [];
  const clients: OpenClient[] = [];

  beforeAll(() => {
    group = setup.group(masterName(client));
  });
  afterEach(async () => {
    await Promise.all(apps.splice(0).map((app) => app.close()));
    await Promise.all(clients.splice(0).map((c) => c.close()));
  });

  /** `store`: the module's own client from ioredis options, or a client of the library, opened here. */
  async function sentinelStore(): Promise<RateLimitModuleOptions['store']> {
    const sentinels = [{ host: setup.sentinel.host, port: setup.sentinel.port }];
    if (client === 'ioredis options') return { sentinels, name: group.name };
    const opened = await openSentinelClient(client, sentinels, group.name);
    clients.push(opened);
    return opened.client;
  }

  async function startSentinelApp(options: RateLimitModuleOptions = {}) {
    const keyPrefix = uniquePrefix();
    const events: RateLimitDecisionEvent[] = [];
    const app = await startApp('express', {
      imports: [
        RateLimitModule.forRoot({
          store: await sentinelStore(),
          globalGuard: true,
          keyPrefix,
          // A decision the store could not make shows as a refusal marked degraded.
          failurePolicy: 'closed',
          timeoutMs: 500,
          onDecision: (event) => events.push(event),
          ...options,
        }),
      ],
      controllers: [MessagesController],
    });
    apps.push(app);
    const send = (user: string) => request(app.getHttpServer()).post('/send').set('x-user', user);
    /** One request: its status and whether the failure policy decided it. */
    const attempt = async (user: string) => {
      const before = events.length;
      const { status } = await send(user);
      return { status, degraded: events.slice(before).some((e) => e.result.decisions.some((d) => d.degraded)) };
    };
    return { keyPrefix, send, attempt, events };
  }

  it('decides on the master the Sentinel names: 3 admitted, the 4th refused, the state in the master', async () => {
    const { keyPrefix, attempt } = await startSentinelApp();
    const decisions = [];
    for (let i = 0; i < 4; i++) decisions.push(await attempt('alice'));
    expect(decisions).toEqual([
      { status: 202, degraded: false },
      { status: 202, degraded: false },
      { status: 202, degraded: false },
      { status: 429, degraded: false },
    ]);
    expect(await group.masterAddress()).toEqual({ host: '127.0.0.1', port: group.master.port });
    expect(await onServer(group.master.port, (c) => c.keys(`${keyPrefix}:*`))).toHaveLength(1);
  });

  it('decides on the promoted replica after the master is SIGKILLed and the Sentinel fails over, the failure policy deciding meanwhile', async () => {
    const { keyPrefix, attempt } = await startSentinelApp({ circuitBreaker: { failureThreshold: 3, minOpenMs: 100, maxOpenMs: 400 } });
    for (let i = 0; i < 3; i++) expect(await attempt('bob')).toEqual({ status: 202, degraded: false });
    // bob's 3 units are on the replica before the master dies.
    expect(await onServer(group.master.port, (c) => c.call('WAIT', 1, 2_000))).toBe(1);

    await onServer(group.replica.port, (c) => c.config('RESETSTAT'));

    const killedAt = Date.now();
    const master = group.master.process!;
    const exited = new Promise((resolve) => master.once('exit', resolve));
    master.kill('SIGKILL');
    // kill() only sends the signal: a call made before the process is gone could still be decided by it.
    await exited;
    const during: { status: number; degraded: boolean }[] = [];
    const promoted = await waitFor('the Sentinel to promote the replica', FAILOVER_DEADLINE_MS, async () => {
      during.push(await attempt(`carol-${during.length}`));
      const { port } = await group.masterAddress();
      return port === group.replica.port ? port : undefined;
    });
    const failoverMs = Date.now() - killedAt;
    // The client finds the new master on its next reconnection; the breaker lets a probe through.
    const resumed = await waitFor('a decision made by the new master', FAILOVER_DEADLINE_MS, async () => {
      const next = await attempt('dave');
      if (!next.degraded) return next;
      during.push(next);
      return undefined;
    });
    const resumedMs = Date.now() - killedAt;

    expect(promoted).toBe(group.replica.port);
    expect(resumed).toEqual({ status: 202, degraded: false });
    // While the master was gone every decision was the failure policy's ('closed': refused), never an error. The
    // client can reach the promoted replica between a call and the loop's look at the Sentinel: such a call is
    // decided by Redis (a fresh tracker: admitted), and no call after it is the policy's.
    expect({ during, degraded: during.filter((d) => d.degraded).length > 0 }).toMatchObject({ degraded: true });
    const back = during.findIndex((d) => !d.degraded);
    const gone = back < 0 ? during : during.slice(0, back);
    expect({ during, policy: gone.every((d) => d.status === 429 && d.degraded) }).toMatchObject({ policy: true });
    expect({ during, redis: during.slice(gone.length).every((d) => d.status === 202 && !d.degraded) }).toMatchObject({ redis: true });
    // bob's units came along: refused by the new master, not by the policy.
    expect(await attempt('bob')).toEqual({ status: 429, degraded: false });
    // bob's key and dave's, and one for each call the new master decided before the loop saw it promoted.
    expect(await onServer(group.replica.port, (c) => c.keys(`${keyPrefix}:*`))).toHaveLength(2 + during.length - gone.length);
    // ioredis and iovalkey fail a call at once while the master is gone (no offline queue): the promoted master ran
    // its own decisions (those of the loop, dave's, bob's last) and nothing else. A node-redis Sentinel queues the
    // calls until it finds the new master, whatever its node clients' disableOfflineQueue, and runs there those still
    // within its command timeout: past their deadline, so they record nothing (the key count above).
    if (!QUEUES_ACROSS_FAILOVER.includes(client)) {
      expect(scriptRuns(await onServer(group.replica.port, (c) => c.info('commandstats')))).toBe(during.length - gone.length + 2);
    }
    expect(failoverMs).toBeLessThan(FAILOVER_DEADLINE_MS);
    expect(resumedMs).toBeLessThan(FAILOVER_DEADLINE_MS);
  }, 40_000);
});
