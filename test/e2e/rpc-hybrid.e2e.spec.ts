import { Controller, Get, type INestApplication } from '@nestjs/common';
import { MessagePattern, Transport } from '@nestjs/microservices';
import { ExpressAdapter } from '@nestjs/platform-express';
import { Test } from '@nestjs/testing';
import request from 'supertest';
import { RateLimitModule } from '../../lib/index.js';
import { ManualClock } from '../support/manual.clock.js';
import { startRedis, uniquePrefix, type TestRedis } from '../support/redis-server.js';
import { STORE_KINDS, useStoreOptions } from './support/e2e-stores.js';
import { nestClient } from './support/rpc-clients.js';
import type { RpcTestClient } from './support/rpc-scenarios.js';

/**
 * A hybrid app (HTTP routes and a microservice) behind the global guard with an ip-keyed default rule, as apps had
 * it before microservices were limited: the HTTP routes keep their limit; the messages of a transport that tells no
 * peer address (here Redis) have no tracker for that rule, which therefore does not apply to them.
 */
@Controller()
class HybridController {
  @Get('ping')
  ping() {
    return 'pong';
  }

  @MessagePattern('ping')
  pingMessage() {
    return 'pong';
  }
}

let broker: TestRedis;
beforeAll(async () => {
  broker = await startRedis({ own: true });
});
afterAll(async () => {
  await broker?.stop();
});

const storeOptions = useStoreOptions();

describe.each(STORE_KINDS)('a hybrid app whose default rule counts per client IP, on the %s store', (kind) => {
  let app: INestApplication;
  let client: RpcTestClient;
  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [
        RateLimitModule.forRoot({
          ...storeOptions(kind),
          keyPrefix: uniquePrefix('hybrid'),
          clock: new ManualClock().now,
          globalGuard: true,
          defaultRule: { algorithm: 'token-bucket', limit: 1, window: '1m' },
        }),
      ],
      controllers: [HybridController],
    }).compile();
    app = moduleRef.createNestApplication(new ExpressAdapter(), { logger: false });
    const transport = { transport: Transport.REDIS, options: { host: '127.0.0.1', port: broker.port } } as const;
    app.connectMicroservice(transport, { inheritAppConfig: true });
    await app.startAllMicroservices();
    await app.listen(0, '127.0.0.1');
    client = await nestClient(transport);
  });
  afterAll(async () => {
    await client?.close();
    await app?.close();
  });

  it('still limits the HTTP routes per client IP', async () => {
    await request(app.getHttpServer()).get('/ping').expect(200);
    await request(app.getHttpServer()).get('/ping').expect(429);
  });

  it('lets every message through: the rule has no tracker for a message without a peer address', async () => {
    for (let i = 0; i < 3; i++) expect(await client.send('ping', {})).toBe('pong');
  });
});
