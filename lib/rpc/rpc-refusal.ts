import type { ExecutionContext, LoggerService } from '@nestjs/common';
import type { RefusedEvents } from '../interfaces/rate-limit-options.interface.js';
import type { RateLimitPolicy } from '../interfaces/rate-limit-policy.interface.js';
import { isEventHandler, rpcRequestOf, type RpcTransport } from './rpc-context.reader.js';
import { retryInfoStatus } from './grpc-status-details.js';
import { RateLimitEventRefused, settleRefusedEvent } from './refused-event.handler.js';

/**
 * The error object of a refused request-response message, the fields of the HTTP 429 body plus the rule's
 * name and limit and the wait in milliseconds. A client gets it as the error of `send()` (TCP, Redis, NATS,
 * MQTT, RabbitMQ); over gRPC its fields travel beside the RESOURCE_EXHAUSTED status, the wait in the trailing metadata.
 */
export interface RpcRateLimitError {
  readonly statusCode: 429;
  readonly message: string;
  /** Seconds (rounded up) before the same message can pass, as `Retry-After` on HTTP. */
  readonly retryAfter: number;
  /** Milliseconds before the same message can pass. */
  readonly retryAfterMs: number;
  /** The refusing rule the client waits longest for. */
  readonly rule: string;
  /** That rule's limit. */
  readonly limit: number;
}

/** gRPC status codes used here (grpc/status.h). */
export const GRPC_INVALID_ARGUMENT = 3;
export const GRPC_RESOURCE_EXHAUSTED = 8;

/** The trailing metadata entry holding the wait in milliseconds on a gRPC refusal. */
export const GRPC_RETRY_AFTER_MS = 'retry-after-ms';

/**
 * What the guard throws for a message its rules refused: for a request-response message, an `RpcException` of
 * `RpcRateLimitError` (with the RESOURCE_EXHAUSTED status on gRPC); for an event, `RateLimitEventRefused`, the
 * message settled as `refusedEvents` says.
 */
export async function rpcRateLimitRefusal(context: ExecutionContext, error: RpcRateLimitError, refusedEvents: RefusedEvents = 'drop'): Promise<Error> {
  const { transport } = rpcRequestOf(context);
  if (isEventHandler(context)) return new RateLimitEventRefused(error.rule, settleRefusedEvent(context, transport, refusedEvents, error.retryAfterMs));
  return rateLimitRpcException(transport, error);
}

/**
 * What the guard throws for a message a rule cannot tell the sender of, after one log line naming the route, the
 * rule and its key: a request-response message gets a 400 `RpcException` (INVALID_ARGUMENT on gRPC); an event is
 * dropped.
 */
export async function untrackedRpcRefusal(context: ExecutionContext, policy: RateLimitPolicy, route: string, logger: Pick<LoggerService, 'warn'>): Promise<Error> {
  const event = isEventHandler(context);
  logger.warn(`Refused ${event ? 'an event' : 'a message'} to ${route}: rule "${policy.name}" counts per "${policy.key.label}", which the message does not carry`);
  if (event) return new RateLimitEventRefused(policy.name, 'dropped');
  return missingKeyRpcException(rpcRequestOf(context).transport, policy.name, policy.key.label);
}

/** The error a refused request-response message is answered with: an `RpcException` of `RpcRateLimitError`. */
async function rateLimitRpcException(transport: RpcTransport, error: RpcRateLimitError): Promise<Error> {
  if (transport !== 'grpc') return rpcException(error);
  const metadata = await grpcMetadata({
    [GRPC_RETRY_AFTER_MS]: String(error.retryAfterMs),
    'grpc-status-details-bin': retryInfoStatus(GRPC_RESOURCE_EXHAUSTED, error.message, error.retryAfterMs),
  });
  return rpcException({ ...error, code: GRPC_RESOURCE_EXHAUSTED, details: error.message, metadata });
}

/**
 * The error of a message a rule cannot tell the sender of (its `key` names nothing in the message): 400, or
 * INVALID_ARGUMENT over gRPC, naming the rule and the key, never the configuration beyond them.
 */
async function missingKeyRpcException(transport: RpcTransport, rule: string, key: string): Promise<Error> {
  const error = { statusCode: 400, message: `Rate limit key "${key}" is missing from the message`, rule };
  return rpcException(transport === 'grpc' ? { ...error, code: GRPC_INVALID_ARGUMENT, details: error.message } : error);
}

// Imported when a message is refused: an RPC context exists only where @nestjs/microservices is installed, and an
// HTTP-only app must not need it (nor @grpc/grpc-js, present whenever a gRPC transport runs).
async function rpcException(error: object): Promise<Error> {
  const { RpcException } = await import('@nestjs/microservices');
  return new RpcException(error);
}

async function grpcMetadata(entries: Record<string, string | Buffer>): Promise<unknown> {
  const { Metadata } = await import('@grpc/grpc-js');
  const metadata = new Metadata();
  for (const [name, value] of Object.entries(entries)) metadata.set(name, value);
  return metadata;
}
