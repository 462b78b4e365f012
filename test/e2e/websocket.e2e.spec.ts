import { UseGuards, type INestApplication } from '@nestjs/common';
import { ExpressAdapter } from '@nestjs/platform-express';
import { WsAdapter } from '@nestjs/platform-ws';
import { Test } from '@nestjs/testing';
import { MessageBody, SubscribeMessage, WebSocketGateway } from '@nestjs/websockets';
import { WebSocket } from 'ws';
import { defineRule, RateLimit, RateLimitGuard, RateLimitModule, RateLimitService } from '../../lib/index.js';
import { ManualClock } from '../support/manual.clock.js';
import { WsClient } from './support/ws-client.js';

@WebSocketGateway()
class EchoGateway {
  @SubscribeMessage('ping')
  @RateLimit('1m', 2)
  @UseGuards(RateLimitGuard)
  ping(@MessageBody() data: unknown) {
    return { event: 'pong', data };
  }

  @SubscribeMessage('free')
  @UseGuards(RateLimitGuard)
  free(@MessageBody() data: unknown) {
    return { event: 'freed', data };
  }
}

const REFUSED = { event: 'exception', data: { statusCode: 429, message: 'Too Many Requests', retryAfter: 60 } };

describe('WebSocket gateway (platform-ws)', () => {
  const clock = new ManualClock();
  const clients: WsClient[] = [];
  let app: INestApplication;
  let port: number;
  let lastHost = 1;
  /** Every test counts for its own client address: 127.0.0.2, 127.0.0.3, ... (all loopback on Linux). */
  const nextAddress = () => `127.0.0.${++lastHost}`;
  const connect = async (address: string) => {
    const client = await WsClient.connect(port, { localAddress: address });
    clients.push(client);
    return client;
  };

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [RateLimitModule.forRoot({ clock: clock.now })],
      providers: [EchoGateway],
    }).compile();
    app = moduleRef.createNestApplication(new ExpressAdapter(), { logger: false });
    app.useWebSocketAdapter(new WsAdapter(app));
    await app.listen(0, '127.0.0.1');
    port = (app.getHttpServer().address() as { port: number }).port;
  });
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.close()));
  });
  afterAll(() => app.close());
  // Each test starts on a minute boundary, so that the sliding window's reset times are whole minutes.
  beforeEach(() => clock.set(Math.ceil((clock.ms + 1) / 60_000) * 60_000));

  it('replies to messages within the limit', async () => {
    const client = await connect(nextAddress());
    expect(await client.request('ping', 1)).toEqual({ event: 'pong', data: 1 });
    expect(await client.request('ping', 2)).toEqual({ event: 'pong', data: 2 });
  });

  it('answers the message past the limit with an exception carrying the 429 body', async () => {
    const client = await connect(nextAddress());
    await client.request('ping', 1);
    await client.request('ping', 2);
    expect(await client.request('ping', 3)).toEqual(REFUSED);
  });

  it('keeps the connection open after a refusal and replies again once the window has passed', async () => {
    const client = await connect(nextAddress());
    await client.request('ping', 1);
    await client.request('ping', 2);
    expect(await client.request('ping', 3)).toEqual(REFUSED);
    expect(client.socket.readyState).toBe(WebSocket.OPEN);
    clock.advance(120_000);
    expect(await client.request('ping', 4)).toEqual({ event: 'pong', data: 4 });
  });

  it('shares the budget between connections from the same address', async () => {
    const address = nextAddress();
    const first = await connect(address);
    const second = await connect(address);
    await first.request('ping', 1);
    await second.request('ping', 2);
    expect(await first.request('ping', 3)).toEqual(REFUSED);
    expect(await second.request('ping', 4)).toEqual(REFUSED);
  });

  it('counts each client address apart', async () => {
    const first = await connect(nextAddress());
    const second = await connect(nextAddress());
    await first.request('ping', 1);
    await first.request('ping', 2);
    expect(await first.request('ping', 3)).toEqual(REFUSED);
    expect(await second.request('ping', 4)).toEqual({ event: 'pong', data: 4 });
  });

  it('keys the store by gateway, handler and the client address', async () => {
    const address = nextAddress();
    const client = await connect(address);
    await client.request('ping', 1);
    await client.request('ping', 2);
    const rule = defineRule({ limit: 2, window: '1m' }, 'default');
    const service = app.get(RateLimitService);
    expect((await service.peek(`EchoGateway.ping|ip:${address}`, rule)).allowed).toBe(false);
    expect((await service.peek(`EchoGateway.ping|ip:${nextAddress()}`, rule)).allowed).toBe(true);
  });

  it('lets a guarded handler without rules through unlimited', async () => {
    const client = await connect(nextAddress());
    for (let i = 0; i < 5; i++) expect(await client.request('free', i)).toEqual({ event: 'freed', data: i });
  });
});
