/**
 * A point in the server's handling of a request that the test holds shut until it opens it: a key function, a
 * store call, a handler. It counts the callers that reached it, so the test knows what is waiting there.
 */
export class Hold {
  private waiting: (() => void)[] = [];
  private arrivals: (() => void)[] = [];
  /** While true, callers wait at `pass()` until `open()`; otherwise they pass at once. */
  held = false;
  arrived = 0;

  /** Counts the caller; waits until the test opens it when held. */
  pass(): Promise<void> {
    this.arrived++;
    for (const arrival of this.arrivals.splice(0)) arrival();
    return this.held ? new Promise((resolve) => this.waiting.push(resolve)) : Promise.resolve();
  }

  /** Resolves once `count` callers in all have reached it. */
  async until(count: number): Promise<void> {
    while (this.arrived < count) await new Promise<void>((resolve) => this.arrivals.push(resolve));
  }

  /** Lets the callers waiting through, and those to come. */
  open(): void {
    this.held = false;
    for (const resolve of this.waiting.splice(0)) resolve();
  }

  reset(): void {
    this.open();
    this.arrivals = [];
    this.arrived = 0;
  }
}
