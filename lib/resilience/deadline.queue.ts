import { RateLimitTimeoutError } from './rate-limit-timeout.error.js';

/** One call waiting for its store. `reject` fails the raced promise (through its `onError`), called only if the store is late. */
interface Pending {
  readonly deadline: number;
  readonly reject: (error: unknown) => void;
  settled: boolean;
}

const INITIAL_CAPACITY = 16;
// Node runs a timer set for longer after 1 ms, with a warning: a deadline further away is reached by re-arming.
const LONGEST_TIMER_MS = 2 ** 31 - 1;

/**
 * Bounds calls to a store by one fixed `timeoutMs` without a timer per call. With one timeout for all calls,
 * deadlines come in the order the calls were made, so the calls wait in a FIFO and a single timer is armed for the
 * oldest one still waiting. A timer per call was a measurable share of CPU and GC on the decision path (it wraps
 * every decision); here the timer fires about once per `timeoutMs` however many calls there are.
 *
 * While no call waits, no timer is armed; while one does, the timer keeps the process alive, as a timer per call did.
 */
export class DeadlineQueue {
  // A ring of power-of-two capacity: O(1) push and shift, and no array of holes growing behind a head index.
  private ring: (Pending | undefined)[] = new Array<Pending | undefined>(INITIAL_CAPACITY);
  private head = 0;
  private size = 0;
  /** Calls in the ring not settled yet; some settled ones may still sit behind an unsettled head. */
  private waiting = 0;
  private timer: ReturnType<typeof setTimeout> | undefined;
  /** Set from the timer until the rejections it decided run, after the I/O phase; the timer is re-armed then. */
  private expiredAt: number | undefined;

  constructor(readonly timeoutMs: number) {}

  /**
   * Settles as `promise` does, or rejects with `RateLimitTimeoutError` once `timeoutMs` passed (and the I/O phase
   * after the timer, see `onTimer`). With `onValue` and `onError`, settles with what they return (or rejects with what
   * they throw) for the value, and for the failure or the timeout: the caller's `.then` of every decision, in this
   * promise instead of one more. A call given up on is settled once, by the timeout: what `promise` comes to later
   * is not given to `onValue` or `onError` (its caller was answered), but a value is to `onLate`, if any (the store
   * did what was asked, for nobody). No unhandled rejection either way.
   */
  race<T>(promise: Promise<T>): Promise<T>;
  race<T, R>(promise: Promise<T>, onValue: (value: T) => R, onError: (error: unknown) => R | Promise<R>, onLate?: (value: T) => void): Promise<R>;
  race<T, R>(promise: Promise<T>, onValue?: (value: T) => R, onError?: (error: unknown) => R | Promise<R>, onLate?: (value: T) => void): Promise<T | R> {
    return new Promise<T | R>((resolve, reject) => {
      const fail: (error: unknown) => void =
        onError === undefined
          ? reject
          : (error) => {
              try {
                resolve(onError(error));
              } catch (thrown) {
                reject(thrown);
              }
            };
      const entry: Pending = { deadline: performance.now() + this.timeoutMs, reject: fail, settled: false };
      this.push(entry);
      if (typeof (promise as Partial<Promise<T>> | undefined)?.then !== 'function') {
        // A custom store that answered with a value, not a promise: its failure, as a rejection would be.
        this.settle(entry);
        fail(new TypeError(`The store answered ${String(promise)}, not a promise (promise.then is not a function)`));
        return;
      }
      promise.then(
        (value) => {
          if (!this.settle(entry)) {
            try {
              onLate?.(value);
            } catch {
              // Its caller was answered: there is nobody to reject.
            }
            return;
          }
          if (onValue === undefined) {
            resolve(value);
            return;
          }
          let result: R;
          try {
            result = onValue(value);
          } catch (thrown) {
            fail(thrown);
            return;
          }
          resolve(result);
        },
        (error: unknown) => {
          // After the timeout, a second failure of the same call: its caller was decided, and told, once.
          if (this.settle(entry)) fail(error);
        },
      );
    });
  }

  private push(entry: Pending): void {
    if (this.size === this.ring.length) this.grow();
    this.ring[(this.head + this.size) & (this.ring.length - 1)] = entry;
    this.size++;
    this.waiting++;
    // Otherwise a timer is armed for an earlier deadline, or the expiry under way re-arms for the oldest left.
    if (this.timer === undefined && this.expiredAt === undefined) this.timer = setTimeout(this.onTimer, Math.min(this.timeoutMs, LONGEST_TIMER_MS));
  }

  /** Marks a call settled by its store; false when it already was (timed out). */
  private settle(entry: Pending): boolean {
    if (entry.settled) return false;
    entry.settled = true;
    this.waiting--;
    // Replies on one connection come in order: dropping settled calls from the head keeps the ring short, so that
    // what a call holds is not kept alive (and promoted to the old generation) until its deadline.
    this.dropSettled();
    if (this.waiting === 0 && this.timer !== undefined) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    return true;
  }

  private readonly onTimer = (): void => {
    this.timer = undefined;
    this.dropSettled();
    if (this.size === 0) return;
    const now = performance.now();
    const oldest = this.ring[this.head]!.deadline;
    // The timer's clock counts whole ms: it may fire a fraction of a ms before the deadline.
    if (oldest > now) {
      this.arm(oldest, now);
      return;
    }
    // Timers run before I/O in Node's event loop: after the loop was blocked for longer than `timeoutMs`, the reply
    // may already be waiting in the socket. Giving up only after the next I/O phase lets a reply Redis sent in time
    // win; giving up on it would leave counted in Redis a request the failure policy decided (and counted) too.
    this.expiredAt = now;
    setImmediate(this.expire);
  };

  /** Rejects the calls still waiting whose deadline had passed when the timer fired, oldest first. */
  private readonly expire = (): void => {
    const due = this.expiredAt!;
    this.expiredAt = undefined;
    while (this.size > 0) {
      const entry = this.ring[this.head]!;
      if (!entry.settled) {
        // A deadline that passed during the I/O phase gets its own I/O phase: the next timer's.
        if (entry.deadline > due) break;
        entry.settled = true;
        this.waiting--;
        entry.reject(new RateLimitTimeoutError(this.timeoutMs));
      }
      this.shift();
    }
    if (this.size > 0) this.arm(this.ring[this.head]!.deadline, performance.now());
  };

  private arm(deadline: number, now: number): void {
    this.timer = setTimeout(this.onTimer, Math.min(Math.max(1, Math.ceil(deadline - now)), LONGEST_TIMER_MS));
  }

  private dropSettled(): void {
    while (this.size > 0 && this.ring[this.head]!.settled) this.shift();
  }

  private shift(): void {
    this.ring[this.head] = undefined;
    this.head = (this.head + 1) & (this.ring.length - 1);
    this.size--;
  }

  private grow(): void {
    const ring = new Array<Pending | undefined>(this.ring.length * 2);
    for (let i = 0; i < this.size; i++) ring[i] = this.ring[(this.head + i) & (this.ring.length - 1)];
    this.ring = ring;
    this.head = 0;
  }
}
