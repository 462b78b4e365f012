import { ExpressAdapter } from '@nestjs/platform-express';
import { WsAdapter } from '@nestjs/platform-ws';
import { Test } from '@nestjs/testing';
import { RateLimitModule } from '../../lib/index.js';
import { STORES, useRedisServer } from './fixtures/guard-app.js';
import { admittedWithin, ExportsGateway, useExportsGateway } from './fixtures/concurrency/exports.gateway.js';

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

describe('a WebSocket gateway with a concurrency rule and no RateLimitInterceptor', () => {
  it('stops the application at start-up, naming the handler and both ways to register the interceptor', async () => {
    const moduleRef = await Test.createTestingModule({ imports: [RateLimitModule.forRoot({ store: 'memory' })], providers: [ExportsGateway] }).compile();
    const app = moduleRef.createNestApplication(new ExpressAdapter(), { logger: false });
    app.useWebSocketAdapter(new WsAdapter(app));
    try {
      await expect(app.init()).rejects.toThrow(/"@RateLimit on ExportsGateway\.\w+": "exports".*globalInterceptor: true.*@UseInterceptors\(RateLimitInterceptor\)/);
    } finally {
      await app.close();
    }
  });
});
