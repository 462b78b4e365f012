import type { Cluster, Redis } from 'ioredis';
import type { WriteCorker } from './redis-client.port.js';

/** The part of a client's socket that corking needs (net.Socket and tls.TLSSocket have it). */
interface Corkable {
  cork(): void;
  uncork(): void;
}

/**
 * Most calls in one corked write. With no cap, the replies of one write came back together, their callers' next calls
 * went out as one write again, and the app and Redis took turns on one write of every call in flight, each idle while
 * the other worked: at 200 in flight, token bucket ran at 60k decisions/s with a write per turn and 113k with writes
 * of 32 (16 and 64 alike), fixed window 85k and 133k. Several writes in flight keep both busy, as coalescing's
 * `maxBatch` does.
 */
const MAX_CORKED = 32;

/**
 * Puts the script calls made in one turn of the event loop into one socket write, each still a script call of its
 * own. With coalescing off, a write per decision (a system call, and on loopback the server's wake-up inside it)
 * was the largest single cost of a decision in the app: over a quarter of its time at 200 in flight. The socket is
 * corked at a turn's first call and uncorked on `process.nextTick`, once the code now running and the promise
 * callbacks it set off have made their calls: no call waits for a later turn, and Redis runs each as it always
 * did, one script at a time. ioredis's auto-pipelining does the same with a pipeline per turn. A turn's calls past
 * MAX_CORKED go out in another write.
 *
 * Only a `Redis` client that is ready: before that, ioredis queues commands itself. A Cluster's calls go out as
 * they are made (one socket per node).
 */
export class RedisWriteCorker implements WriteCorker {
  private corked: Corkable | undefined;
  /** Calls in the corked write so far. */
  private calls = 0;
  private readonly uncork = (): void => {
    const socket = this.corked;
    this.corked = undefined;
    socket?.uncork();
  };

  constructor(private readonly client: Redis | Cluster) {}

  /** Called before each script call is sent. */
  cork(): void {
    if (this.corked !== undefined) {
      if (++this.calls <= MAX_CORKED) return;
      this.uncork();
    }
    if (this.client.isCluster) return;
    const { stream, status } = this.client as Redis & { stream?: Partial<Corkable> };
    if (status !== 'ready' || typeof stream?.cork !== 'function' || typeof stream.uncork !== 'function') return;
    stream.cork();
    this.corked = stream as Corkable;
    this.calls = 1;
    process.nextTick(this.uncork);
  }
}
