import { UseGuards, UseInterceptors, type INestApplication } from '@nestjs/common';
import { ExpressAdapter } from '@nestjs/platform-express';
import { WsAdapter } from '@nestjs/platform-ws';
import { Test } from '@nestjs/testing';
import { MessageBody, SubscribeMessage, WebSocketGateway } from '@nestjs/websockets';
import { WebSocket } from 'ws';
import { RateLimit, RateLimitGuard, RateLimitInterceptor, RateLimitModule, type RateLimitErrorDetail } from '../../lib/index.js';
import { ManualClock } from '../support/manual.clock.js';
import { uniquePrefix } from '../support/redis-server.js';
import { PATIENT_TIMEOUT_MS } from '../support/store-timeout.js';
import { STORES, useRedisServer } from './fixtures/guard-app.js';
import { WsClient } from './support/ws-client.js';

/**
 * The refusal of a rate rule on a WebSocket gateway (README, "The 429": a `WsException` with the 429 body), on a
 * handler whose class also has a concurrency rule: the rate rule is decided in the guard, the lease is left to
 * RateLimitInterceptor (http/handler-lease.binder.ts), which never runs for a refused message, so it holds nothing.
 */
@WebSocketGateway()
@RateLimit({ name: 'exports', algorithm: 'concurrency', limit: 1, leaseMs: '1m', key: 'header:x-user', shared: true })
@UseGuards(RateLimitGuard)
@UseInterceptors(RateLimitInterceptor)
class SearchGateway {
  /** Two a minute per user, refilled one every 30 s. */
  @SubscribeMessage('search')
  @RateLimit({ name: 'search', algorithm: 'token-bucket', limit: 2, window: '1m', key: 'header:x-user' })
  search(@MessageBody() data: unknown) {
    return { event: 'found', data };
  }

  /** Only the concurrency rule: admitted only when its one slot is free. */
  @SubscribeMessage('quick')
  quick(@MessageBody() data: unknown) {
    return { event: 'quick', data };
  }
}

const message = (_context: unknown, detail: RateLimitErrorDetail) => `${detail.rule}: ${detail.used} of ${detail.limit}, retry in ${detail.retryAfterMs} ms`;

const redis = useRedisServer();

describe.each(STORES)('a rate rule refusing a WebSocket message (platform-ws) on the %s store', (store) => {
  const clients: WsClient[] = [];
  let app: INestApplication | undefined;
  let clock: ManualClock;
  let port = 0;
  let lastUser = 0;
  const connect = async () => {
    const client = await WsClient.connect(port, { headers: { 'X-User': `user-${++lastUser}` } });
    clients.push(client);
    return client;
  };

  beforeEach(async () => {
    clock = new ManualClock();
    const storeOptions = store === 'memory' ? { store: 'memory' as const } : { store: redis(), timeoutMs: PATIENT_TIMEOUT_MS };
    const moduleRef = await Test.createTestingModule({
      imports: [RateLimitModule.forRoot({ clock: clock.now, keyPrefix: uniquePrefix(), ...storeOptions, errorMessage: message })],
      providers: [SearchGateway],
    }).compile();
    app = moduleRef.createNestApplication(new ExpressAdapter(), { logger: false });
    app.useWebSocketAdapter(new WsAdapter(app));
    await app.listen(0, '127.0.0.1');
    port = (app.getHttpServer().address() as { port: number }).port;
  });
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.close()));
    await app?.close();
    app = undefined;
  });

  it('answers the message past the rate limit with an exception event carrying the 429 body: the message and retryAfter in seconds', async () => {
    const client = await connect();
    expect(await client.request('search', 1)).toEqual({ event: 'found', data: 1 });
    expect(await client.request('search', 2)).toEqual({ event: 'found', data: 2 });
    expect(await client.request('search', 3)).toEqual({
      event: 'exception',
      data: { statusCode: 429, message: 'search: 2 of 2, retry in 30000 ms', retryAfter: 30 },
    });
    expect(client.socket.readyState).toBe(WebSocket.OPEN);
  });

  it('takes no concurrency slot for a message its rate rule refused', async () => {
    const client = await connect();
    await client.request('search', 1);
    await client.request('search', 2);
    expect((await client.request('search', 3)).event).toBe('exception');
    // One slot: a lease taken for the refused message and never released would refuse this one.
    expect(await client.request('quick', 4)).toEqual({ event: 'quick', data: 4 });
  });

  it('admits the message again once retryAfter has passed, and not a millisecond before', async () => {
    const client = await connect();
    await client.request('search', 1);
    await client.request('search', 2);
    expect((await client.request('search', 3)).event).toBe('exception');
    clock.advance(30_000 - 1);
    expect(await client.request('search', 4)).toMatchObject({ event: 'exception', data: { statusCode: 429, retryAfter: 1 } });
    clock.advance(1);
    expect(await client.request('search', 5)).toEqual({ event: 'found', data: 5 });
  });

  it('counts each user apart: another user is answered while the first is refused', async () => {
    const first = await connect();
    const second = await connect();
    await first.request('search', 1);
    await first.request('search', 2);
    expect((await first.request('search', 3)).event).toBe('exception');
    expect(await second.request('search', 4)).toEqual({ event: 'found', data: 4 });
  });
});
