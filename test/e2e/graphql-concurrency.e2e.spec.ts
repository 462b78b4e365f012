import { request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ApolloDriver, type ApolloDriverConfig } from '@nestjs/apollo';
import { Args, GraphQLModule, Query, Resolver } from '@nestjs/graphql';
import { RateLimit } from '../../lib/index.js';
import { STORES, useGuardApps, useRedisServer, type GuardApp } from './fixtures/guard-app.js';
import { Gate } from './fixtures/concurrency/exports.controller.js';

/** Holds the `report` resolvers until the test opens it. */
const gate = new Gate();

/**
 * Two resolvers under one concurrency rule (2 in flight per X-User, shared between them): `report` waits at the
 * gate (and throws after it when asked to), `ping` answers at once.
 */
@Resolver()
@RateLimit({ name: 'reports', algorithm: 'concurrency', limit: 2, leaseMs: '1m', key: 'header:x-user', shared: true })
class ReportsResolver {
  @Query(() => String)
  async report(@Args('fail', { type: () => Boolean, nullable: true }) fail?: boolean): Promise<string> {
    await gate.hold();
    if (fail) throw new Error('report failed');
    return 'done';
  }

  @Query(() => String)
  ping(): string {
    return 'pong';
  }
}

/** Apollo on Express only, as in graphql.e2e.spec.ts (the project has no Apollo integration for Fastify). */
const CONTEXTS = [
  ['the default GraphQL context ({ req })', undefined],
  ['a context of { req, res }', ({ req, res }: { req: unknown; res: unknown }) => ({ req, res })],
] as const;

const redis = useRedisServer();

describe.each(CONTEXTS)('a concurrency limit of 2 on GraphQL resolvers (Apollo on Express) with %s', (_label, context) => {
  describe.each(STORES)('with the %s store', (store) => {
    const start = useGuardApps('express', store, redis);
    const startReports = () =>
      start(
        { globalGuard: true },
        {
          imports: [GraphQLModule.forRoot<ApolloDriverConfig>({ driver: ApolloDriver, autoSchemaFile: true, ...(context ? { context } : {}) })],
          providers: [ReportsResolver],
        },
      );
    const gql = ({ http }: GuardApp, query: string, user = 'u1') =>
      http().post('/graphql').set('X-User', user).set('Content-Type', 'application/json').send({ query }).then((res) => res);
    const report = (app: GuardApp) => gql(app, '{ report }');
    const failingReport = (app: GuardApp) => gql(app, '{ report(fail: true) }');
    const ping = (app: GuardApp, user?: string) => gql(app, '{ ping }', user);

    beforeEach(() => gate.reset());
    afterEach(() => gate.open());

    it('refuses a third query while two are held, with the 429 in the error extensions, and answers the held two', async () => {
      const app = await startReports();
      const running = [report(app), report(app)];
      await gate.until(2);
      const third = await ping(app);
      // @nestjs/apollo answers 200 whenever the body has `data`, so the 429 travels in the error.
      expect(third.status).toBe(200);
      expect(third.body.data).toBeNull();
      expect(third.body.errors).toHaveLength(1);
      expect(third.body.errors[0]).toMatchObject({
        message: 'Too Many Requests',
        path: ['ping'],
        extensions: { status: 429, originalError: { statusCode: 429, message: 'Too Many Requests', retryAfter: 1 } },
      });
      expect(third.headers['retry-after']).toBe('1');
      gate.open();
      expect((await Promise.all(running)).map((res) => res.body)).toEqual([{ data: { report: 'done' } }, { data: { report: 'done' } }]);
    });

    it('admits queries again once the held ones have finished: both slots are released', async () => {
      const app = await startReports();
      const running = [report(app), report(app)];
      await gate.until(2);
      expect((await ping(app)).body.errors[0].extensions.status).toBe(429);
      gate.open();
      await Promise.all(running);
      expect((await ping(app)).body).toEqual({ data: { ping: 'pong' } });
      // Two new queries reach the resolver at once: neither slot is still taken.
      const again = [report(app), report(app)];
      await gate.until(4);
      expect((await ping(app)).body.errors[0].extensions.status).toBe(429);
      gate.open();
      expect((await Promise.all(again)).map((res) => res.body)).toEqual([{ data: { report: 'done' } }, { data: { report: 'done' } }]);
    });

    it('frees the slots of resolvers that threw', async () => {
      const app = await startReports();
      const failing = [failingReport(app), failingReport(app)];
      await gate.until(2);
      expect((await ping(app)).body.errors[0].extensions.status).toBe(429);
      gate.open();
      for (const res of await Promise.all(failing)) {
        expect(res.body.data).toBeNull();
        expect(res.body.errors[0]).toMatchObject({ message: 'report failed', path: ['report'] });
      }
      expect((await ping(app)).body).toEqual({ data: { ping: 'pong' } });
      const again = [report(app), report(app)];
      await gate.until(4);
      gate.open();
      expect((await Promise.all(again)).map((res) => res.body)).toEqual([{ data: { report: 'done' } }, { data: { report: 'done' } }]);
    });

    it('holds a slot per guarded field of one operation: the third field is refused, and the two admitted free theirs when it ends', async () => {
      const app = await startReports();
      const operation = gql(app, '{ a: report b: report c: report }');
      await gate.until(2);
      gate.open();
      const res = await operation;
      expect(res.body.data).toBeNull();
      expect(res.body.errors).toHaveLength(1);
      expect(res.body.errors[0]).toMatchObject({ path: ['c'], extensions: { status: 429 } });
      const again = [report(app), report(app)];
      await gate.until(4);
      gate.open();
      expect((await Promise.all(again)).map((r) => r.body)).toEqual([{ data: { report: 'done' } }, { data: { report: 'done' } }]);
    });

    it('frees the slot of a query whose client aborted while its resolver was held', async () => {
      const app = await startReports();
      const server = app.app.getHttpServer() as Server;
      const closed = new Promise<void>((resolve) => server.once('request', (_req: IncomingMessage, res: ServerResponse) => res.once('close', () => resolve())));
      const { port } = server.address() as AddressInfo;
      const body = JSON.stringify({ query: '{ report }' });
      const aborted = httpRequest({ port, host: '127.0.0.1', path: '/graphql', method: 'POST', headers: { 'x-user': 'u1', 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } });
      aborted.on('error', () => undefined);
      aborted.end(body);
      await gate.until(1);
      const other = report(app);
      await gate.until(2);
      expect((await ping(app)).body.errors[0].extensions.status).toBe(429);
      aborted.destroy();
      await closed;
      // The resolver is still held at the gate: only the connection's end can have freed the slot.
      expect((await ping(app)).body).toEqual({ data: { ping: 'pong' } });
      gate.open();
      expect((await other).body).toEqual({ data: { report: 'done' } });
    });

    it('counts each X-User on slots of their own', async () => {
      const app = await startReports();
      const running = [report(app), report(app)];
      await gate.until(2);
      expect((await ping(app, 'u2')).body).toEqual({ data: { ping: 'pong' } });
      gate.open();
      await Promise.all(running);
    });
  });
});
