import type { ExecutionContext } from '@nestjs/common';
import type { HttpRequestLike } from '../interfaces/http-request.interface.js';
import { upgradeRequestOf } from './upgrade-requests.js';

/** The request and response (or reply) of a context; `request` is undefined for contexts the guard cannot read. */
export interface RequestResponse {
  request?: HttpRequestLike & Record<string, unknown>;
  response?: unknown;
}

/**
 * HTTP: Express or Fastify objects. GraphQL: `req` / `res` (Apollo) or `reply` (Mercurius) of the GraphQL
 * context, the third resolver argument; without `res`, Express's `req.res`. WebSocket: a request-like object
 * holding the client's address and handshake headers (socket.io's handshake; for ws, the upgrade request when it
 * came through the app's HTTP server, else the socket's address alone). Anything else: no request.
 */
export function requestResponseOf(context: ExecutionContext): RequestResponse {
  const type = context.getType<string>();
  if (type === 'http') {
    const http = context.switchToHttp();
    return { request: http.getRequest(), response: http.getResponse() };
  }
  if (type === 'graphql') {
    const gql = context.getArgByIndex<Record<string, any> | undefined>(2);
    const reply = gql?.reply;
    const request = gql?.req ?? gql?.request ?? reply?.request;
    // @nestjs/apollo's default context is `{ req }` alone; Express links its response from the request.
    return { request, response: gql?.res ?? reply ?? request?.res };
  }
  if (type === 'ws') return { request: wsRequest(context.switchToWs().getClient()) };
  return {};
}

function wsRequest(client: Record<string, any> | undefined): RequestResponse['request'] {
  if (!client) return undefined;
  const user = client.user ?? client.data?.user;
  // socket.io keeps the handshake: the connection's address and the upgrade request's headers.
  const handshake = client.handshake;
  if (handshake) return socketRequest(handshake.address ?? client.conn?.remoteAddress, handshake.headers, user);
  // The ws library keeps only the socket; the upgrade request is known when it came through the app's HTTP server.
  const upgrade = upgradeRequestOf(client._socket) ?? client.upgradeReq;
  if (upgrade) return socketRequest(upgrade.socket?.remoteAddress, upgrade.headers, user);
  // A gateway on its own port: the socket's address is all there is.
  return socketRequest(client._socket?.remoteAddress, undefined, user);
}

/** A request-like object on which `clientIp` applies `trustProxy` exactly as on HTTP (proxy-addr reads `socket` and `headers`). */
function socketRequest(address: string | undefined, headers: HttpRequestLike['headers'], user: unknown): RequestResponse['request'] {
  return { ip: address, socket: { remoteAddress: address }, headers: headers ?? {}, user };
}

/** Sets headers on an Express response, a Fastify reply, or a raw Node response. */
export function setHeaders(response: unknown, headers: readonly [string, string][]): void {
  const res = response as { header?: (n: string, v: string) => unknown; setHeader?: (n: string, v: string) => unknown; headersSent?: boolean; sent?: boolean };
  if (!res || res.headersSent || res.sent) return;
  for (const [name, value] of headers) {
    if (typeof res.header === 'function') res.header(name, value);
    else if (typeof res.setHeader === 'function') res.setHeader(name, value);
  }
}
