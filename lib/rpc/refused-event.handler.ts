import { IntrinsicException, type ExecutionContext } from '@nestjs/common';
import type { RefusedEvents } from '../interfaces/rate-limit-options.interface.js';
import type { RpcTransport } from './rpc-context.reader.js';

/** What became of a refused event. */
export type RefusedEventOutcome = 'dropped' | 'redelivered' | 'rejected';

/**
 * Thrown by the guard for a refused `@EventPattern` message, so that its handler does not run. An
 * IntrinsicException: Nest's RPC exception handler logs nothing for it (an event has no reply to carry an error,
 * and a refusal is no fault), while the refusal is counted in the metrics as any other.
 */
export class RateLimitEventRefused extends IntrinsicException {
  constructor(
    /** The refusing rule (or the rule whose key the message lacks). */
    readonly rule: string,
    readonly outcome: RefusedEventOutcome,
  ) {
    super(`Rate limit rule "${rule}" refused an event: ${outcome}`);
  }
}

/** The longest a refused RabbitMQ message is held before it is handed back, so that it does not spin through the queue. */
export const REDELIVER_DELAY_MAX_MS = 1_000;

type RmqContextLike = { getMessage(): unknown; getChannelRef(): { nack(message: unknown, allUpTo?: boolean, requeue?: boolean): void } };

/**
 * Settles a refused event as its rule asks (see `RefusedEvents`), and says what became of it. Only RabbitMQ takes a
 * message back; every other transport acknowledged it on delivery, so there it is dropped whatever the rule says.
 * `'redeliver'` holds the message until the wait has passed, at most REDELIVER_DELAY_MAX_MS, since the broker hands a
 * requeued message out again at once: refused again and again, it would spin between broker and guard.
 */
export function settleRefusedEvent(context: ExecutionContext, transport: RpcTransport, policy: RefusedEvents, retryAfterMs: number): RefusedEventOutcome {
  if (policy === 'drop' || transport !== 'rmq') return 'dropped';
  const rmq = context.switchToRpc().getContext<RmqContextLike>();
  const nack = (requeue: boolean) => {
    try {
      rmq.getChannelRef().nack(rmq.getMessage(), false, requeue);
    } catch {
      // The channel closed meanwhile (the app is stopping): the broker requeues every unacknowledged message itself.
    }
  };
  if (policy === 'reject') {
    nack(false);
    return 'rejected';
  }
  const timer = setTimeout(() => nack(true), Math.min(Math.max(0, retryAfterMs), REDELIVER_DELAY_MAX_MS));
  // A pending redelivery must not keep the process alive: the broker requeues the message if the channel closes.
  timer.unref();
  return 'redelivered';
}
