import { STORES, useRedisServer } from './fixtures/guard-app.js';
import { admittedWithin, useExportsGateway } from './fixtures/concurrency/exports.gateway.js';

const redis = useRedisServer();

describe.each(STORES)('a concurrency limit of 1 per user on a WebSocket gateway (platform-ws) with the %s store', (store) => {
  const { connect, nextUser } = useExportsGateway(store, redis);

  it('frees the slot of a message that a later guard refused after the rate-limit guard admitted it', async () => {
    const client = await connect(nextUser());
    expect(await client.request('denied', 1)).toMatchObject({ event: 'exception', data: { status: 'error', message: 'Forbidden resource' } });
    // Without a release the slot stays taken (and its lease renewed) until the client disconnects.
    expect(await admittedWithin(client)).toBe(true);
  });
});
