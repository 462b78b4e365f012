/**
 * The module on Redis Sentinel: `store: { sentinels, name }` (ioredis options, so the module creates the client
 * with its safe settings). Real processes: a master, a replica (`--replicaof`) and one Sentinel (quorum 1).
 */
import { Controller, HttpCode, Post, type INestApplication } from '@nestjs/common';
import { Redis } from 'ioredis';
import request from 'supertest';
import { RateLimit, RateLimitModule, type RateLimitDecisionEvent, type RateLimitModuleOptions } from '../../lib/index.js';
import { startApp } from '../e2e/support/http-app.js';
import { ManualClock } from '../support/manual.clock.js';
import { uniquePrefix } from '../support/redis-server.js';
import { MASTER_NAME, startSentinelSetup, waitFor, type SentinelSetup } from './sentinel.support.js';

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

@Controller()
class MessagesController {
  @Post('send')
  @HttpCode(202)
  @RateLimit({ name: 'send', limit: 3, window: '1h', algorithm: 'sliding-window', key: 'header:x-user', shared: true })
  send() {
    return { sent: true };
  }
}

describe('RateLimitModule on Redis Sentinel (store: { sentinels, name })', () => {
  let setup: SentinelSetup;
  const apps: INestApplication[] = [];

  beforeAll(async () => {
    setup = await startSentinelSetup();
  }, HOOK_TIMEOUT_MS);
  afterEach(async () => {
    await Promise.all(apps.splice(0).map((app) => app.close()));
  });
  afterAll(async () => {
    await setup?.stop();
  }, HOOK_TIMEOUT_MS);

  async function startSentinelApp(options: RateLimitModuleOptions = {}) {
    const keyPrefix = uniquePrefix();
    const events: RateLimitDecisionEvent[] = [];
    const app = await startApp('express', {
      imports: [
        RateLimitModule.forRoot({
          store: { sentinels: [{ host: setup.sentinel.host, port: setup.sentinel.port }], name: MASTER_NAME },
          globalGuard: true,
          keyPrefix,
          clock: new ManualClock().now,
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
    expect(await setup.masterAddress()).toEqual({ host: '127.0.0.1', port: setup.master.port });
    expect(await onServer(setup.master.port, (c) => c.keys(`${keyPrefix}:*`))).toHaveLength(1);
  });

  it('decides on the promoted replica after the master is SIGKILLed and the Sentinel fails over, the failure policy deciding meanwhile', async () => {
    const { keyPrefix, attempt } = await startSentinelApp({ circuitBreaker: { failureThreshold: 3, minOpenMs: 100, maxOpenMs: 400 } });
    for (let i = 0; i < 3; i++) expect(await attempt('bob')).toEqual({ status: 202, degraded: false });
    // bob's 3 units are on the replica before the master dies.
    expect(await onServer(setup.master.port, (c) => c.call('WAIT', 1, 2_000))).toBe(1);

    const killedAt = Date.now();
    const master = setup.master.process!;
    const exited = new Promise((resolve) => master.once('exit', resolve));
    master.kill('SIGKILL');
    // kill() only sends the signal: a call made before the process is gone could still be decided by it.
    await exited;
    const during: { status: number; degraded: boolean }[] = [];
    const promoted = await waitFor('the Sentinel to promote the replica', FAILOVER_DEADLINE_MS, async () => {
      during.push(await attempt(`carol-${during.length}`));
      const { port } = await setup.masterAddress();
      return port === setup.replica.port ? port : undefined;
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

    expect(promoted).toBe(setup.replica.port);
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
    expect(await onServer(setup.replica.port, (c) => c.keys(`${keyPrefix}:*`))).toHaveLength(2 + during.length - gone.length);
    expect(failoverMs).toBeLessThan(FAILOVER_DEADLINE_MS);
    expect(resumedMs).toBeLessThan(FAILOVER_DEADLINE_MS);
  }, 40_000);
});
