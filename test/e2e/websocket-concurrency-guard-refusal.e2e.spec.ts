import { STORES, useRedisServer } from './fixtures/guard-app.js';
import { admittedWithin, REFUSED, useExportsGateway, wsGate as gate } from './fixtures/concurrency/exports.gateway.js';

const redis = useRedisServer();

describe.each(STORES)('a concurrency limit of 1 per user on a WebSocket gateway (platform-ws) with the %s store', (store) => {
  describe('with globalInterceptor', () => {
    const { connect, nextUser } = useExportsGateway(store, redis, 'global');

    it('frees the slot of a message that a later guard refused after the rate-limit guard admitted it', async () => {
      const client = await connect(nextUser());
      expect(await client.request('denied', 1)).toMatchObject({ event: 'exception', data: { status: 'error', message: 'Forbidden resource' } });
      // Without a release the slot stays taken (and its lease renewed) until the client disconnects.
      expect(await admittedWithin(client)).toBe(true);
    });

    it('holds the lease of a message until its handler ends', async () => {
      const client = await connect(nextUser());
      client.send('export', { id: 1 });
      await gate.until(1);
      expect(await client.request('quick', 2)).toEqual(REFUSED);
      gate.open();
      expect(await client.next()).toEqual({ event: 'exported', data: 1 });
      expect(await client.request('quick', 3)).toEqual({ event: 'quick', data: 3 });
    });
  });

  describe('without RateLimitInterceptor', () => {
    const { connect, nextUser } = useExportsGateway(store, redis, 'none');

    it('refuses every message under the concurrency rule with a server error rather than leave its limit unenforced', async () => {
      const client = await connect(nextUser());
      expect(await client.request('quick', 1)).toMatchObject({ event: 'exception', data: { status: 'error', message: 'Internal server error' } });
      expect(await client.request('quick', 2)).toMatchObject({ event: 'exception', data: { status: 'error', message: 'Internal server error' } });
    });
  });
});
