import { Controller, Get, type ExecutionContext } from '@nestjs/common';
import { request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { MemoryStore, RateLimit, type Decision, type MultiDecision, type RateLimitRule, type RuleKey } from '../../lib/index.js';
import { STORES, useGuardApps, useRedisServer, type GuardApp } from './fixtures/guard-app.js';
import { Hold } from './support/hold.js';
import { PLATFORMS } from './support/http-app.js';

/**
 * A client that leaves while the guard is still deciding its request: the response is already closed when the
 * leases of its concurrency rules are taken, so no 'close' or 'finish' will come to release them. The guard must
 * release them at once (http/request-lease.binder.ts), or the slot stays taken for the lease's whole life.
 */

/** Held around the tracker of the next request (a function key). */
const keyHold = new Hold();
/** Counts the requests the guard admitted: the handler runs for an aborted one too, once the guard is done with it. */
const handled = new Hold();

/** The memory store, whose decisions wait for the test while `hold` is held: a decision in flight. */
class HeldStore extends MemoryStore {
  readonly hold = new Hold();

  override async consume(key: string, rule: RateLimitRule, cost?: number): Promise<Decision> {
    await this.hold.pass();
    return super.consume(key, rule, cost);
  }

  override async consumeAll(entries: readonly RuleKey[], cost?: number): Promise<MultiDecision> {
    await this.hold.pass();
    return super.consumeAll(entries, cost);
  }
}

const heldKey = async (): Promise<string> => {
  await keyHold.pass();
  return 'u1';
};

@Controller('reports')
export class ReportsController {
  /** One report in flight per user, and 100 a minute: the rate rule is what a store decides before the lease. */
  @Get()
  @RateLimit({ name: 'reports-rate', limit: 100, window: '1m', key: 'header:x-user', shared: true })
  @RateLimit({ name: 'reports', algorithm: 'concurrency', limit: 1, leaseMs: '1m', key: 'header:x-user', shared: true })
  async run(): Promise<{ ok: true }> {
    await handled.pass();
    return { ok: true };
  }

  /** One in flight, keyed by a function the test holds: the rules wait for it before any store call. */
  @Get('keyed')
  @RateLimit({ name: 'keyed', algorithm: 'concurrency', limit: 1, leaseMs: '1m', key: (_context: ExecutionContext) => heldKey(), shared: true })
  async keyed(): Promise<{ ok: true }> {
    await handled.pass();
    return { ok: true };
  }
}

/** Sends a request, and destroys it once `before` resolved, after the server saw it; resolves when the server's response closed. */
async function abortWhile(app: GuardApp, path: string, before: () => Promise<void>): Promise<void> {
  const server = app.app.getHttpServer() as Server;
  const closed = new Promise<void>((resolve) => server.once('request', (_req: IncomingMessage, res: ServerResponse) => res.once('close', () => resolve())));
  const { port } = server.address() as AddressInfo;
  const aborted = httpRequest({ port, host: '127.0.0.1', path, headers: { 'x-user': 'u1' } });
  aborted.on('error', () => undefined);
  aborted.end();
  await before();
  aborted.destroy();
  await closed;
}

const redis = useRedisServer();

describe.each(PLATFORMS)('a client that goes away while the guard decides, on %s', (platform) => {
  beforeEach(() => {
    keyHold.reset();
    handled.reset();
  });
  afterEach(() => {
    keyHold.open();
    handled.open();
  });

  describe('while the store decides its rate rule', () => {
    const start = useGuardApps(platform, 'memory', redis);

    it('frees the concurrency slot of a request whose client left while the store was deciding it', async () => {
      const store = new HeldStore();
      const app = await start({ store, globalGuard: true }, { controllers: [ReportsController] });
      store.hold.held = true;
      await abortWhile(app, '/reports', () => store.hold.until(1));
      store.hold.open();
      // The guard has admitted the aborted request (Nest runs its handler all the same) and is done with its leases.
      await handled.until(1);
      const next = await app.http().get('/reports').set('x-user', 'u1');
      expect(next.status).toBe(200);
      expect(next.headers['ratelimit']).toContain('"reports";r=0');
    });
  });

  describe.each(STORES)('while a function key resolves, with the %s store', (store) => {
    const start = useGuardApps(platform, store, redis);

    it('frees the concurrency slot of a request whose client left before its key resolved', async () => {
      const app = await start({ globalGuard: true }, { controllers: [ReportsController] });
      keyHold.held = true;
      await abortWhile(app, '/reports/keyed', () => keyHold.until(1));
      keyHold.open();
      await handled.until(1);
      // One slot: the next request is admitted only if the aborted one's lease went back.
      const statuses = [];
      for (let i = 0; i < 2; i++) statuses.push((await app.http().get('/reports/keyed').set('x-user', 'u1')).status);
      expect(statuses).toEqual([200, 200]);
    });
  });
});
