import { longestWaitMs } from '../interfaces/decision.arithmetic.js';
import type { MultiDecision } from '../interfaces/decision.interface.js';
import { RateLimitWaitTimeoutError } from './rate-limit-wait-timeout.error.js';
import type { CheckedWaitOptions } from './wait-options.js';
import { REAL_TIMERS, type WaitTimers } from './wait.timers.js';

/**
 * The longest a timer can sleep (2^31 - 1 ms, about 24.8 days); Node fires a longer one at once. A longer wait (a
 * lockout) sleeps this long and asks again, to be told what is left.
 */
const LONGEST_TIMER_MS = 2_147_483_647;

/** One call's way to the store: its all-or-nothing decision, and how to give back an admission nobody awaits any more. */
export interface WaitAttempt {
  decide(): Promise<MultiDecision>;
  giveBack(result: MultiDecision): Promise<unknown>;
}

interface Waiter {
  readonly attempt: WaitAttempt;
  /** `timers.now()` past which the call may not wait. */
  readonly deadline: number;
  readonly maxWaitMs: number;
  readonly resolve: (result: MultiDecision) => void;
  readonly reject: (error: unknown) => void;
  settled: boolean;
  signal?: AbortSignal;
  onAbort?: () => void;
}

/** The calls waiting on one set of keys and rules, first come first served. */
interface WaitQueue {
  readonly waiters: Waiter[];
  /** The waiter whose decision is in flight. */
  asking?: Waiter;
  /** Set while the queue sleeps after a refusal, until `refusedUntil` (`timers.now()`) when its head asks again. */
  timer?: unknown;
  refusedUntil: number;
}

/**
 * Makes calls wait for their rules instead of failing. Calls on the same keys and rules queue in arrival order, and
 * only the queue's head asks the store; after a refusal the queue sleeps exactly the wait the decision reported (the
 * longest of the refusing rules') and its head asks again. Every admission is a real, all-or-nothing consume, so
 * processes sharing a Redis never exceed a rule between them: the script decides, the queue only saves calls.
 */
export class RateLimitWaiter {
  private readonly queues = new Map<string, WaitQueue>();

  constructor(private readonly timers: WaitTimers = REAL_TIMERS) {}

  /**
   * Resolves with the decision once `attempt` is admitted; rejects with `RateLimitWaitTimeoutError` once a reported
   * wait ends past `maxWaitMs`, with the signal's reason on abort, and with what `decide` threw. `signature` names
   * the keys and rules: calls of the same signature share one queue.
   */
  wait(signature: string, attempt: WaitAttempt, { maxWaitMs, signal }: CheckedWaitOptions): Promise<MultiDecision> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    const now = this.timers.now();
    const queue = this.queues.get(signature);
    // A queue asleep after a refusal: a call whose bound ends before its head may ask again cannot be served in time.
    if (queue?.timer !== undefined && queue.refusedUntil > now + maxWaitMs) {
      return Promise.reject(new RateLimitWaitTimeoutError(queue.refusedUntil - now, maxWaitMs, maxWaitMs));
    }
    return new Promise<MultiDecision>((resolve, reject) => {
      const waiter: Waiter = { attempt, deadline: now + maxWaitMs, maxWaitMs, resolve, reject, settled: false };
      const joined = queue ?? this.open(signature);
      if (signal) {
        waiter.signal = signal;
        waiter.onAbort = () => this.abandon(signature, joined, waiter, signal.reason);
        signal.addEventListener('abort', waiter.onAbort, { once: true });
      }
      joined.waiters.push(waiter);
      if (!joined.asking && joined.timer === undefined) this.ask(signature, joined);
    });
  }

  /** Rejects every waiting call with `reason` and clears the timers (the module is closing). */
  close(reason: unknown): void {
    for (const queue of this.queues.values()) {
      if (queue.timer !== undefined) this.timers.clearTimeout(queue.timer);
      for (const waiter of queue.waiters.splice(0)) this.settle(waiter)?.reject(reason);
    }
    this.queues.clear();
  }

  /** Calls waiting, all queues together. */
  get size(): number {
    let size = 0;
    for (const queue of this.queues.values()) size += queue.waiters.length;
    return size;
  }

  private open(signature: string): WaitQueue {
    const queue: WaitQueue = { waiters: [], refusedUntil: -Infinity };
    this.queues.set(signature, queue);
    return queue;
  }

  /** The head of the queue asks the store; an empty queue is dropped. */
  private ask(signature: string, queue: WaitQueue): void {
    const head = queue.waiters[0];
    if (!head) {
      if (this.queues.get(signature) === queue) this.queues.delete(signature);
      return;
    }
    queue.asking = head;
    let decided: Promise<MultiDecision>;
    try {
      decided = head.attempt.decide();
    } catch (error) {
      decided = Promise.reject(error);
    }
    decided.then(
      (result) => this.decided(signature, queue, head, result),
      (error) => {
        queue.asking = undefined;
        this.remove(queue, head);
        this.settle(head)?.reject(error);
        this.ask(signature, queue);
      },
    );
  }

  private decided(signature: string, queue: WaitQueue, head: Waiter, result: MultiDecision): void {
    queue.asking = undefined;
    if (result.allowed) {
      this.remove(queue, head);
      const settled = this.settle(head);
      // Aborted while its decision was in flight: what it took goes back, as nobody will use it.
      if (settled) settled.resolve(result);
      else head.attempt.giveBack(result).catch(() => undefined);
      this.ask(signature, queue);
      return;
    }
    // At least 1 ms: a refusal that reported no wait must not spin on the store.
    const waitMs = Math.max(1, longestWaitMs(result.decisions));
    const now = this.timers.now();
    queue.refusedUntil = now + waitMs;
    // Nobody is served before the head asks again: whoever may not wait that long gives up now, not at its deadline.
    for (const waiter of [...queue.waiters]) {
      if (waiter.deadline >= queue.refusedUntil) continue;
      this.remove(queue, waiter);
      this.settle(waiter)?.reject(new RateLimitWaitTimeoutError(waitMs, waiter.maxWaitMs, waiter.deadline - now));
    }
    if (queue.waiters.length === 0) return this.ask(signature, queue);
    queue.timer = this.timers.setTimeout(() => {
      queue.timer = undefined;
      this.ask(signature, queue);
    }, Math.min(waitMs, LONGEST_TIMER_MS));
  }

  /** An aborted call leaves its queue at once; the queue's timer goes with its last call. */
  private abandon(signature: string, queue: WaitQueue, waiter: Waiter, reason: unknown): void {
    const settled = this.settle(waiter);
    if (!settled) return;
    this.remove(queue, waiter);
    if (queue.waiters.length === 0 && queue.timer !== undefined) {
      this.timers.clearTimeout(queue.timer);
      queue.timer = undefined;
      if (this.queues.get(signature) === queue) this.queues.delete(signature);
    }
    settled.reject(reason);
  }

  /** Marks a waiter settled (once) and drops its abort listener; undefined when it already was. */
  private settle(waiter: Waiter): Waiter | undefined {
    if (waiter.settled) return undefined;
    waiter.settled = true;
    if (waiter.onAbort) waiter.signal!.removeEventListener('abort', waiter.onAbort);
    return waiter;
  }

  private remove(queue: WaitQueue, waiter: Waiter): void {
    const at = queue.waiters.indexOf(waiter);
    if (at >= 0) queue.waiters.splice(at, 1);
  }
}
