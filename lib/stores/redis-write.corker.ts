import type { Cluster, Redis } from 'ioredis';

/** The part of a client's socket that corking needs (net.Socket and tls.TLSSocket have it). */
interface Corkable {
  cork(): void;
  uncork(): void;
}

/**
 * Puts the script calls made in one turn of the event loop into one socket write, each still a script call of its
 * own. With coalescing off, a write per decision (a system call, and on loopback the server's wake-up inside it)
 * was the largest single cost of a decision in the app: over a quarter of its time at 200 in flight. The socket is
 * corked at a turn's first call and uncorked on `process.nextTick`, once the code now running and the promise
 * callbacks it set off have made their calls: no call waits for a later turn, and Redis runs each as it always
 * did, one script at a time. ioredis's auto-pipelining does the same with a pipeline per turn.
 *
 * Only a `Redis` client that is ready: before that, ioredis queues commands itself. A Cluster's calls go out as
 * they are made (one socket per node).
 */
export class RedisWriteCorker {
  private corked: Corkable | undefined;
  private readonly uncork = (): void => {
    const socket = this.corked;
    this.corked = undefined;
    socket?.uncork();
  };

  constructor(private readonly client: Redis | Cluster) {}

  /** Called before each script call is sent. */
  cork(): void {
    if (this.corked !== undefined || this.client.isCluster) return;
    const { stream, status } = this.client as Redis & { stream?: Partial<Corkable> };
    if (status !== 'ready' || typeof stream?.cork !== 'function' || typeof stream.uncork !== 'function') return;
    stream.cork();
    this.corked = stream as Corkable;
    process.nextTick(this.uncork);
  }
}
