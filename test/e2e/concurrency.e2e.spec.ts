import { request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Registry } from 'prom-client';
import { STORES, useGuardApps, useRedisServer, type GuardApp } from './fixtures/guard-app.js';
import { ExportsController, gate } from './fixtures/concurrency/exports.controller.js';
import { PLATFORMS } from './support/http-app.js';

const redis = useRedisServer();

describe.each(PLATFORMS)('a concurrency limit of 2 exports per user on %s', (platform) => {
  describe.each(STORES)('with the %s store', (store) => {
    const start = useGuardApps(platform, store, redis);
    const startExports = () => start({ globalGuard: true }, { controllers: [ExportsController] });
    const held = ({ http }: GuardApp, query = '') => http().get(`/exports${query}`).set('x-user', 'u1').then((res) => res);
    const quick = ({ http }: GuardApp) => http().get('/exports/quick').set('x-user', 'u1');
    beforeEach(() => gate.reset());
    afterEach(() => gate.open());

    it('refuses a third request while two are in flight, with a 429 and Retry-After: 1', async () => {
      const app = await startExports();
      const running = [held(app), held(app)];
      await gate.until(2);
      const third = await quick(app);
      expect(third.status).toBe(429);
      expect(third.headers['retry-after']).toBe('1');
      gate.open();
      expect((await Promise.all(running)).map((r) => r.status)).toEqual([200, 200]);
    });

    it('counts a refusal for want of a free slot in the metrics and onRejected, and each admitted lease as allowed', async () => {
      const registry = new Registry();
      const rejected: { rules: string[]; allowed: boolean }[] = [];
      const app = await start(
        { globalGuard: true, metrics: { registry }, onRejected: (event) => rejected.push({ rules: event.entries.map((e) => e.rule), allowed: event.result.allowed }) },
        { controllers: [ExportsController] },
      );
      const running = [held(app), held(app)];
      await gate.until(2);
      expect((await quick(app)).status).toBe(429);
      gate.open();
      await Promise.all(running);
      const { values } = await registry.getSingleMetric('rate_limit_decisions_total')!.get();
      expect(Object.fromEntries(values.map((v) => [`${v.labels.rule}/${v.labels.result}`, v.value]))).toEqual({ 'exports/allowed': 2, 'exports/rejected': 1 });
      expect(rejected).toEqual([{ rules: ['exports'], allowed: false }]);
    });

    it('admits a request again once one in flight has finished', async () => {
      const app = await startExports();
      const running = [held(app), held(app)];
      await gate.until(2);
      gate.open();
      await Promise.all(running);
      expect((await quick(app)).status).toBe(200);
    });

    it('counts each user on slots of their own', async () => {
      const app = await startExports();
      const running = [held(app), held(app)];
      await gate.until(2);
      expect((await app.http().get('/exports/quick').set('x-user', 'u2')).status).toBe(200);
      gate.open();
      await Promise.all(running);
    });

    it('frees the slots of requests whose handler threw', async () => {
      const app = await startExports();
      const failing = [held(app, '?fail=1'), held(app, '?fail=1')];
      await gate.until(2);
      gate.open();
      expect((await Promise.all(failing)).map((r) => r.status)).toEqual([500, 500]);
      // Both slots are free: two more requests reach the handler.
      const running = [held(app), held(app)];
      await gate.until(4);
      gate.open();
      await Promise.all(running);
    });

    it('frees the slot of a request the client aborted while its handler ran', async () => {
      const app = await startExports();
      const server = app.app.getHttpServer() as Server;
      const closed = new Promise<void>((resolve) => server.once('request', (_req: IncomingMessage, res: ServerResponse) => res.once('close', () => resolve())));
      const { port } = server.address() as AddressInfo;
      const aborted = httpRequest({ port, host: '127.0.0.1', path: '/exports', headers: { 'x-user': 'u1' } });
      aborted.on('error', () => undefined);
      aborted.end();
      await gate.until(1);
      const other = held(app);
      await gate.until(2);
      expect((await quick(app)).status).toBe(429);
      aborted.destroy();
      await closed;
      await new Promise((resolve) => setImmediate(resolve));
      expect((await quick(app)).status).toBe(200);
      gate.open();
      await other;
    });
  });
});
