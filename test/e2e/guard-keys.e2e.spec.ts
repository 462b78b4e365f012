import { PLATFORMS } from './support/http-app.js';
import { STORES, useGuardApps, useRedisServer, type GuardApp } from './fixtures/guard-app.js';
import { KeysController } from './fixtures/keys/keys.controller.js';

const redis = useRedisServer();

describe.each(PLATFORMS)('rate-limit keys on %s', (platform) => {
  describe.each(STORES)('with the %s store', (store) => {
    const start = useGuardApps(platform, store, redis);
    const startKeys = () => start({ globalGuard: true }, { controllers: [KeysController] });

    /** The first request of `a` passes, its second is refused, and the first of `b` passes: `a` and `b` are counted apart. */
    async function expectCountedApart(a: () => PromiseLike<{ status: number }>, b: () => PromiseLike<{ status: number }>, ok = 200) {
      expect((await a()).status).toBe(ok);
      expect((await a()).status).toBe(429);
      expect((await b()).status).toBe(ok);
    }

    it('counts key "ip" per client address, under the route\'s namespace', async () => {
      const keys = await startKeys();
      await keys.http().get('/keys/ip').expect(200);
      await keys.http().get('/keys/ip').expect(429);
      expect((await keys.service.peek('keys:KeysController.byIp|ip:127.0.0.1', { limit: 1, window: '1m' })).allowed).toBe(false);
    });

    it('counts a header key per header value, whatever the case of the header name', async () => {
      const { http } = await startKeys();
      await expectCountedApart(() => http().get('/keys/header').set('x-api-key', 'key-a'), () => http().get('/keys/header').set('X-API-KEY', 'key-b'));
    });

    it('counts a param key per route parameter', async () => {
      const { http } = await startKeys();
      await expectCountedApart(() => http().get('/keys/param/1'), () => http().get('/keys/param/2'));
    });

    it('counts a query key per query parameter', async () => {
      const { http } = await startKeys();
      await expectCountedApart(() => http().get('/keys/query?apiKey=k1'), () => http().get('/keys/query?apiKey=k2'));
    });

    it('counts a body key per field of the JSON body', async () => {
      const { http } = await startKeys();
      await expectCountedApart(() => http().post('/keys/body').send({ username: 'alice' }), () => http().post('/keys/body').send({ username: 'bob' }), 201);
    });

    it('counts a dotted body key per nested field, numbers included', async () => {
      const { http } = await startKeys();
      const account = (id: number) => () => http().post('/keys/nested').send({ account: { id } });
      await expectCountedApart(account(42), account(43), 201);
    });

    it('counts a function key per value the function returns', async () => {
      const { http } = await startKeys();
      await expectCountedApart(() => http().get('/keys/sync-fn').set('x-tenant', 't1'), () => http().get('/keys/sync-fn').set('x-tenant', 't2'));
    });

    it('counts an async function key per value its promise resolves to', async () => {
      const { http } = await startKeys();
      await expectCountedApart(() => http().get('/keys/async-fn').set('x-tenant', 't1'), () => http().get('/keys/async-fn').set('x-tenant', 't2'));
    });

    describe('requests without the key', () => {
      const withoutKey = ({ http }: GuardApp) => http().get('/keys/header');
      const withKey = ({ http }: GuardApp, value: string) => http().get('/keys/header').set('x-api-key', value);

      it('counts them per client IP, so clients without the key share no budget with keyed ones', async () => {
        const keys = await startKeys();
        await withoutKey(keys).expect(200);
        await withoutKey(keys).expect(429);
        await withKey(keys, 'key-a').expect(200);
      });

      it('counts them under a namespace of their own', async () => {
        const keys = await startKeys();
        await withoutKey(keys).expect(200);
        const fallback = await keys.service.peek('keys:KeysController.byHeader|no-header:x-api-key:ip:127.0.0.1', { limit: 1, window: '1m' });
        expect(fallback.allowed).toBe(false);
      });

      it('leaves the keyed budgets alone when they are exhausted', async () => {
        const keys = await startKeys();
        await withKey(keys, 'key-a').expect(200);
        await withKey(keys, 'key-a').expect(429);
        await withoutKey(keys).expect(200);
      });

      it('treats an empty header value as a missing key', async () => {
        const keys = await startKeys();
        await withKey(keys, '').expect(200);
        await withoutKey(keys).expect(429);
      });

      it('treats a body field holding an object as a missing key, not as one shared value', async () => {
        const { http } = await startKeys();
        await http().post('/keys/body').send({ username: { first: 'a' } }).expect(201);
        await http().post('/keys/body').send({ username: { first: 'b' } }).expect(429);
        await http().post('/keys/body').send({ username: 'alice' }).expect(201);
      });

      it('treats a function key returning nothing as a missing key', async () => {
        const { http } = await startKeys();
        await http().get('/keys/sync-fn').expect(200);
        await http().get('/keys/sync-fn').expect(429);
        await http().get('/keys/sync-fn').set('x-tenant', 't1').expect(200);
      });

      it('answers 400 naming the key when the rule requires it', async () => {
        const { http } = await startKeys();
        const res = await http().get('/keys/required').expect(400);
        expect(res.body).toMatchObject({ statusCode: 400, message: 'Rate limit key "header:x-api-key" is missing from the request' });
      });

      it('admits a request that carries the required key', async () => {
        const { http } = await startKeys();
        await http().get('/keys/required').set('x-api-key', 'key-a').expect(200);
        await http().get('/keys/required').set('x-api-key', 'key-a').expect(429);
      });
    });
  });
});
