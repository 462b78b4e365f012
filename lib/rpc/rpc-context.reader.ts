import { isIP } from 'node:net';
import type { ExecutionContext } from '@nestjs/common';
import type { HttpRequestLike } from '../interfaces/http-request.interface.js';

/** The transports whose messages the guard reads (`'kafka'` is read the same way, untested). */
export type RpcTransport = 'tcp' | 'redis' | 'nats' | 'mqtt' | 'rmq' | 'grpc' | 'kafka' | 'unknown';

/**
 * A message seen as a request, so that `key` reads the same on HTTP and RPC: `body` is the payload, `headers` the
 * transport's headers or metadata (names lower-cased), `user` the payload's `user`, `ip` the peer address where
 * the transport has one (TCP, gRPC).
 */
export interface RpcRequest extends Pick<HttpRequestLike, 'ip' | 'socket'> {
  [field: string]: unknown;
  readonly transport: RpcTransport;
  headers: Record<string, string | string[] | undefined>;
  body: unknown;
  user?: { id?: unknown; sub?: unknown } | null;
}

// Nest's metadata key and value for `@EventPattern` handlers (PATTERN_HANDLER_METADATA, PatternHandler.EVENT).
const HANDLER_TYPE_METADATA = 'microservices:handler_type';
const EVENT_HANDLER = 2;

/** Whether the handler is an `@EventPattern` one: no reply goes back, so a refusal cannot be answered. */
export function isEventHandler(context: ExecutionContext): boolean {
  return Reflect.getMetadata(HANDLER_TYPE_METADATA, context.getHandler()) === EVENT_HANDLER;
}

/** The message of an RPC context, read from Nest's context object of each transport (recognised by shape). */
export function rpcRequestOf(context: ExecutionContext): RpcRequest {
  const rpc = context.switchToRpc();
  const data = rpc.getData<unknown>();
  const ctx = rpc.getContext<Record<string, any> | undefined>();
  const [transport, headers, ip] = transportParts(ctx, context.getArgByIndex(2));
  const user = data !== null && typeof data === 'object' ? (data as { user?: RpcRequest['user'] }).user : undefined;
  return { transport, headers, body: data, user, ip, socket: { remoteAddress: ip } };
}

type Parts = [RpcTransport, RpcRequest['headers'], string | undefined];

function transportParts(ctx: Record<string, any> | undefined, third: unknown): Parts {
  if (!ctx) return ['unknown', {}, undefined];
  // gRPC: the handler's arguments are (request, Metadata, call).
  if (typeof ctx.getMap === 'function' && typeof (third as { getPeer?: unknown })?.getPeer === 'function') {
    return ['grpc', lowerCased(ctx.getMap()), grpcPeerAddress((third as { getPeer(): string }).getPeer())];
  }
  if (typeof ctx.getSocketRef === 'function') {
    const socket = ctx.getSocketRef()?.netSocket ?? ctx.getSocketRef()?.socket;
    return ['tcp', lowerCased(ctx.getMetadata?.()), socket?.remoteAddress];
  }
  if (typeof ctx.getChannel === 'function') return ['redis', lowerCased(ctx.getMetadata?.()), undefined];
  if (typeof ctx.getSubject === 'function') return ['nats', natsHeaders(ctx.getHeaders()), undefined];
  if (typeof ctx.getChannelRef === 'function') return ['rmq', lowerCased(ctx.getMessage()?.properties?.headers), undefined];
  if (typeof ctx.getPartition === 'function') return ['kafka', lowerCased(ctx.getMessage()?.headers), undefined];
  if (typeof ctx.getPacket === 'function') return ['mqtt', lowerCased(ctx.getPacket()?.properties?.userProperties), undefined];
  return ['unknown', {}, undefined];
}

/** Header values as strings (Buffers decoded, numbers written out), under lower-cased names as on HTTP. */
function lowerCased(source: Record<string, unknown> | null | undefined): RpcRequest['headers'] {
  const headers: RpcRequest['headers'] = {};
  if (!source || typeof source !== 'object') return headers;
  for (const [name, value] of Object.entries(source)) {
    const text = Array.isArray(value) ? value.map(headerText).filter((v) => v !== undefined) : headerText(value);
    if (text !== undefined) headers[name.toLowerCase()] = text as string | string[];
  }
  return headers;
}

function headerText(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (Buffer.isBuffer(value)) return value.toString('utf8');
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return undefined;
}

/** NATS headers (`MsgHdrs`): an iterable of [name, values]; absent when the message has none. */
function natsHeaders(hdrs: { keys?(): string[]; values?(k: string): string[] } | undefined): RpcRequest['headers'] {
  const headers: RpcRequest['headers'] = {};
  if (!hdrs || typeof hdrs.keys !== 'function' || typeof hdrs.values !== 'function') return headers;
  for (const name of hdrs.keys()) {
    const values = hdrs.values(name);
    headers[name.toLowerCase()] = values.length === 1 ? values[0] : values;
  }
  return headers;
}

/** grpc-js's `call.getPeer()`: `<address>:<port>` (IPv6 unbracketed), or `ipv4:` / `ipv6:[...]` forms of older versions. */
function grpcPeerAddress(peer: string): string | undefined {
  const match = /^\[?(.+?)\]?:\d+$/.exec(peer.replace(/^ipv[46]:/, ''));
  return match && isIP(match[1]) ? match[1] : undefined;
}
