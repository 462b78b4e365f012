import type { BudgetGrant } from '../../interfaces/budget.interface.js';
import type { Decision, MultiDecision } from '../../interfaces/decision.interface.js';
import type { ScriptCall } from './redis-call.codec.js';

/** A call waiting in a batch, and how to hand it its part of the batch's reply. */
export interface PendingCall extends ScriptCall {
  /**
   * Its decisions (undefined for a refund or a give-back, a BudgetGrant for a take); a call marked `single` gets its
   * one Decision instead of a MultiDecision.
   */
  resolve(result: MultiDecision | Decision | BudgetGrant | undefined): void;
  /** A one-rule consume or peek whose caller wants the Decision alone: no MultiDecision is built for it. */
  single: boolean;
  reject(error: unknown): void;
  /**
   * Date.now() when its batch opened (the batch's first call was made), read once per batch: the deadline counts
   * from it for every call of the batch, a fraction of a turn earlier than some were made, never later.
   */
  madeAt: number;
}

/**
 * Sends a batch and settles every call of it: each with its part of the reply, or all with the batch's error.
 * It calls `landed` once, when the batch's reply (or failure) is in. A batch sent as one script call calls it before
 * settling any call, so that a caller that awaited its decision and calls again finds no batch in flight, and its
 * call goes out at once; a Cluster batch split over nodes calls it once every node has answered.
 */
export type BatchSender = (calls: PendingCall[], landed: () => void) => void;

/** How calls are coalesced; `false` sends each call as a script call of its own. */
export interface CoalesceOptions {
  /**
   * Most calls one script call decides. A larger batch saves per-call overhead, but holds Redis (which runs one
   * script at a time) for longer, and several smaller batches in flight keep both the app and Redis busy: while
   * Redis runs one, the app encodes the next and decodes the last. Measured at 200 decisions in flight, 32 to 64
   * decided the most per second, 256 (one batch in flight at a time) about half as many; 64 decided 2-13% more than 32
   * where the app's CPU was the limit (fixed window), no fewer where Redis's was. On a GLIDE client, whose cost per
   * command is higher, 128 decided 15-25% more than 64 with a fixed window (192 and 256 fewer), as many with a
   * sliding window. @default 64 (128 on a GLIDE client)
   */
  maxBatch?: number;
}

export const DEFAULT_MAX_BATCH = 64;

/**
 * Most sliding-log entries the batches in flight may add or remove (a consume's or refund's cost under a sliding-log
 * rule; every other call's work hardly depends on its cost), unless one batch alone has more. A script call is checked
 * against its deadline once, before its first call, and Redis sends the replies of the script calls it read together
 * only once it has run them all: 64 consumes of cost 1,000 ran 64-150 ms as one script call, long after their callers
 * gave up, and all were written. Each entry is about 1.2 µs of Redis's time (define-rule.ts): 256 are about 0.3 ms. A
 * batch of 1-unit calls (64 at most) never reaches it.
 */
export const MAX_BATCH_ENTRIES = 256;

/** A batch closed, and the sliding-log entries its calls add or remove. */
interface ClosedBatch {
  calls: PendingCall[];
  entries: number;
}

/**
 * Coalesces the script calls made in one turn of the event loop into one. A call made while no batch is in flight
 * is sent at once, as a batch of one: an idle app's lone call waits for nothing, not even the end of its turn (a
 * caller that then blocks the event loop still has its command on the wire, and answered in time). A call made
 * while batches are in flight opens a batch, sent with `setImmediate`: after every I/O callback of this turn of
 * the loop has run, so that the decisions of all the HTTP requests read in one turn (each its own callback) and
 * all the callers that the replies of earlier batches woke go out together, in one socket write, with no timer.
 * They wait only for the rest of this turn, while the batch in flight holds Redis anyway. A batch that reaches
 * `maxBatch` is sent at once. On a client that writes from a `setImmediate` of its own (node-redis), the flush is
 * scheduled before a lone call is sent, so that the calls made after it in the same turn go in its write; and on one
 * connection, a batch closed while the client holds another for its next write is handed to it after that write, a
 * turn later: one batch per write. Written together, a turn's batches were answered together, and the app and Redis
 * took turns waiting for each other; one per write, Redis runs a batch while the app reads the replies to the one
 * before (as ioredis, which writes each at once, does by itself).
 *
 * Heavy calls (sliding-log consumes with large costs) are bounded by their work: a batch closes before a call would
 * take it past `MAX_BATCH_ENTRIES`, and while batches in flight have that many, the next batch waits for them to land
 * (with any batch closed after it). Each then meets its deadline check just before it runs, and its callers get their
 * replies as soon as it has run, not once Redis has run everything sent with it.
 */
export class RedisCallBatcher {
  private pending: PendingCall[] = [];
  /** Date.now() when the pending batch's first call was made. */
  private openedAt = 0;
  /** Sliding-log entries the pending batch may add or remove. */
  private entries = 0;
  /** Batches sent and not yet settled. */
  private inFlight = 0;
  /** Sliding-log entries of the batches in flight. */
  private entriesInFlight = 0;
  /** Batches closed while the heavy ones in flight had too many entries, in order. */
  private held: ClosedBatch[] = [];
  /** Whether a client that writes from a `setImmediate` holds a batch (not a lone call) for its next write. */
  private handed = false;
  /** Batches sent while it did, in order, each with its `landed`: handed over one per write (see `written`). */
  private readonly deferred: [PendingCall[], () => void][] = [];
  private readonly flush = () => this.send();
  private readonly landed = () => {
    this.inFlight--;
    if (this.held.length > 0) this.release();
  };

  constructor(
    private readonly sender: BatchSender,
    private readonly maxBatch: number,
    /** Whether the client writes from a `setImmediate` of its own (RedisClientPort.writesFromImmediate). */
    private readonly writesFromImmediate = false,
    /**
     * Whether such a client gets one batch per write (see the class comment): on one connection. Not on a Cluster,
     * where each node has its own and their writes overlap already: holding batches back there only delays them.
     */
    private readonly oneBatchPerWrite = writesFromImmediate,
  ) {}

  /**
   * The call's decisions, from the script call that decides its batch: its one Decision when `single`, else a
   * MultiDecision (undefined for a refund).
   */
  submit(op: 'lease', rules: ScriptCall['rules'], single: true): Promise<BudgetGrant>;
  submit(op: 'return', rules: ScriptCall['rules'], single: true, till: number): Promise<undefined>;
  submit(op: ScriptCall['op'], rules: ScriptCall['rules'], single: true): Promise<Decision>;
  submit(op: ScriptCall['op'], rules: ScriptCall['rules'], single: false): Promise<MultiDecision | undefined>;
  submit(op: ScriptCall['op'], rules: ScriptCall['rules'], single: boolean, till?: number): Promise<MultiDecision | Decision | BudgetGrant | undefined> {
    return new Promise<MultiDecision | Decision | BudgetGrant | undefined>((resolve, reject) => {
      const entries = op === 'peek' ? 0 : slidingLogEntries(rules);
      // The batch so far goes now, without this call: past MAX_BATCH_ENTRIES it would hold Redis too long.
      if (this.entries + entries > MAX_BATCH_ENTRIES && this.pending.length > 0) this.send();
      if (this.pending.length === 0) this.openedAt = Date.now();
      this.entries += entries;
      const queued = this.pending.push({ op, rules, single, resolve, reject, madeAt: this.openedAt, till });
      if (queued === 1 && this.inFlight === 0) {
        // A client that writes from a setImmediate of its own would write this call from one scheduled before the
        // flush of the calls made after it in this turn, and those only in the next turn: the flush goes first.
        if (this.writesFromImmediate) setImmediate(this.flush);
        this.send();
      } else if (queued === 1) setImmediate(this.flush);
      else if (queued >= this.maxBatch) this.send();
    });
  }

  private send(): void {
    const calls = this.pending;
    if (calls.length === 0) return;
    const entries = this.entries;
    this.pending = [];
    this.entries = 0;
    if (this.held.length > 0 || this.overloads(entries)) this.held.push({ calls, entries });
    else this.transmit(calls, entries);
  }

  /** Whether a batch of `entries` sent now would put more than MAX_BATCH_ENTRIES in flight (one alone may). */
  private overloads(entries: number): boolean {
    return entries > 0 && this.entriesInFlight > 0 && this.entriesInFlight + entries > MAX_BATCH_ENTRIES;
  }

  private transmit(calls: PendingCall[], entries: number): void {
    const alone = this.inFlight === 0;
    this.inFlight++;
    const landed = entries === 0 ? this.landed : this.heavyLanded(entries);
    if (!this.oneBatchPerWrite) {
      this.sender(calls, landed);
    } else if (this.handed) {
      this.deferred.push([calls, landed]);
    } else {
      this.sender(calls, landed);
      // After a lone call, the client stays open to the batch of the calls made after it: it goes in the same write.
      if (!alone) this.awaitWrite();
    }
  }

  /** The `landed` of a batch with sliding-log entries, which are in flight until it lands. */
  private heavyLanded(entries: number): () => void {
    this.entriesInFlight += entries;
    return () => {
      this.entriesInFlight -= entries;
      this.landed();
    };
  }

  /**
   * Marks a batch handed to a client that writes from a `setImmediate`: `written`, scheduled after the client's own,
   * runs once the client has written it.
   */
  private awaitWrite(): void {
    this.handed = true;
    setImmediate(this.written);
  }

  /** The client wrote the batch it held: the next batch sent meanwhile goes to it, for its next write. */
  private readonly written = (): void => {
    const next = this.deferred.shift();
    if (next === undefined) {
      this.handed = false;
      return;
    }
    const [calls, landed] = next;
    try {
      this.sender(calls, landed);
    } catch (error) {
      // Not from a caller's turn, so no caller would see it: the batch fails as a batch the client refused does.
      landed();
      for (const call of calls) call.reject(error);
    }
    // After the client's setImmediate, which the batch just scheduled: this one runs once it has been written.
    setImmediate(this.written);
  };

  /** Sends the held batches, in order, as far as the entries in flight allow. */
  private release(): void {
    while (this.held.length > 0 && !this.overloads(this.held[0].entries)) {
      const next = this.held.shift()!;
      this.transmit(next.calls, next.entries);
    }
  }
}

/** The sliding-log entries a consume or refund of `rules` adds or removes: its cost under each sliding-log rule. */
function slidingLogEntries(rules: ScriptCall['rules']): number {
  let entries = 0;
  for (let i = 0; i < rules.length; i++) if (rules[i].definition.tag === 'sl') entries += rules[i].cost;
  return entries;
}
