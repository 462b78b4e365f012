import { request as httpRequest } from 'node:http';
import { Controller, Get, UseGuards, type INestApplication } from '@nestjs/common';
import { ExpressAdapter } from '@nestjs/platform-express';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { WsAdapter } from '@nestjs/platform-ws';
import { Test } from '@nestjs/testing';
import { MessageBody, SubscribeMessage, WebSocketGateway } from '@nestjs/websockets';
import { WebSocket } from 'ws';
import { defineRule, RateLimit, RateLimitGuard, RateLimitModule, RateLimitService, type RateLimitModuleOptions } from '../../lib/index.js';
import { freePort } from '../support/redis-server.js';
import { ManualClock } from '../support/manual.clock.js';
import { PLATFORMS, type Platform } from './support/http-app.js';

const ONE_PER_MINUTE = defineRule({ limit: 1, window: '1m' }, 'default');

/** A gateway with one handler limited to 1 message a minute, on the app's HTTP server or on a port of its own. */
function limitedGateway(port?: number) {
  @WebSocketGateway(port)
  class EchoGateway {
    @SubscribeMessage('ping')
    @RateLimit('1m', 1)
    @UseGuards(RateLimitGuard)
    ping(@MessageBody() data: unknown) {
      return { event: 'pong', data };
    }
  }
  return EchoGateway;
}

@Controller()
class PlainController {
  @Get('plain')
  plain() {
    return 'plain';
  }
}

/** Opens a `ws` connection from loopback, as a proxy in front of the app would, naming the client in X-Forwarded-For. */
async function connect(port: number, forwardedFor?: string): Promise<WebSocket> {
  const socket = new WebSocket(`ws://127.0.0.1:${port}/`, { headers: forwardedFor ? { 'X-Forwarded-For': forwardedFor } : {} });
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('error', reject);
  });
  return socket;
}

/** Sends one ping and resolves with the name of the event that answers it: 'pong', or 'exception' when refused. */
function ping(socket: WebSocket): Promise<string> {
  const reply = new Promise<string>((resolve) => socket.once('message', (raw) => resolve((JSON.parse(raw.toString()) as { event: string }).event)));
  socket.send(JSON.stringify({ event: 'ping', data: 1 }));
  return reply;
}

describe.each(PLATFORMS)('WebSocket clients behind a proxy (platform-ws on %s)', (platform: Platform) => {
  const sockets: WebSocket[] = [];
  let app: INestApplication | undefined;

  async function start(options: RateLimitModuleOptions, metadata: { gateway?: boolean } = { gateway: true }): Promise<number> {
    const moduleRef = await Test.createTestingModule({
      imports: [RateLimitModule.forRoot({ clock: new ManualClock().now, ...options })],
      providers: metadata.gateway ? [limitedGateway()] : [],
      controllers: [PlainController],
    }).compile();
    app = moduleRef.createNestApplication(platform === 'express' ? new ExpressAdapter() : new FastifyAdapter(), { logger: false });
    if (metadata.gateway) app.useWebSocketAdapter(new WsAdapter(app));
    await app.listen(0, '127.0.0.1');
    return (app.getHttpServer().address() as { port: number }).port;
  }
  const open = async (port: number, forwardedFor?: string) => {
    const socket = await connect(port, forwardedFor);
    sockets.push(socket);
    return socket;
  };

  afterEach(async () => {
    for (const socket of sockets.splice(0)) socket.terminate();
    await app?.close();
    app = undefined;
  });

  it('gives two clients with different X-Forwarded-For their own budgets when trustProxy trusts the proxy', async () => {
    const port = await start({ trustProxy: 'loopback' });
    const first = await open(port, '203.0.113.1');
    const second = await open(port, '203.0.113.2');
    expect(await ping(first)).toBe('pong');
    expect(await ping(first)).toBe('exception');
    expect(await ping(second)).toBe('pong');
  });

  it('keys a WebSocket client behind a trusted proxy by the forwarded address', async () => {
    const port = await start({ trustProxy: 'loopback' });
    await ping(await open(port, '203.0.113.7'));
    const service = app!.get(RateLimitService);
    expect((await service.peek('EchoGateway.ping|ip:203.0.113.7', ONE_PER_MINUTE)).allowed).toBe(false);
  });

  it('ignores X-Forwarded-For without trustProxy: the proxy address is the one budget', async () => {
    const port = await start({});
    const first = await open(port, '203.0.113.1');
    const second = await open(port, '203.0.113.2');
    expect(await ping(first)).toBe('pong');
    expect(await ping(second)).toBe('exception');
  });

  it('ignores X-Forwarded-For from a proxy trustProxy does not trust', async () => {
    const port = await start({ trustProxy: '10.0.0.0/8' });
    const first = await open(port, '203.0.113.1');
    const second = await open(port, '203.0.113.2');
    expect(await ping(first)).toBe('pong');
    expect(await ping(second)).toBe('exception');
  });

  it('leaves upgrade requests to an app without gateways answered over HTTP', async () => {
    const port = await start({ trustProxy: 'loopback' }, { gateway: false });
    const status = await new Promise<number | undefined>((resolve, reject) => {
      const req = httpRequest({ port, host: '127.0.0.1', path: '/plain', headers: { Connection: 'Upgrade', Upgrade: 'websocket' } });
      req.on('response', (res) => {
        res.resume();
        resolve(res.statusCode);
      });
      req.on('upgrade', () => resolve(101));
      req.on('error', reject);
      req.end();
    });
    expect(status).toBe(200);
  });
});

describe('a gateway on its own port', () => {
  let app: INestApplication | undefined;
  const sockets: WebSocket[] = [];
  afterEach(async () => {
    for (const socket of sockets.splice(0)) socket.terminate();
    await app?.close();
  });

  it('counts by the socket address even with trustProxy, since the upgrade request is out of reach', async () => {
    const port = await freePort();
    const moduleRef = await Test.createTestingModule({
      imports: [RateLimitModule.forRoot({ clock: new ManualClock().now, trustProxy: 'loopback' })],
      providers: [limitedGateway(port)],
    }).compile();
    app = moduleRef.createNestApplication(new ExpressAdapter(), { logger: false });
    app.useWebSocketAdapter(new WsAdapter(app));
    await app.listen(0, '127.0.0.1');
    const first = await connect(port, '203.0.113.1');
    const second = await connect(port, '203.0.113.2');
    sockets.push(first, second);
    expect(await ping(first)).toBe('pong');
    expect(await ping(second)).toBe('exception');
  });
});
