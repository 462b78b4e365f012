import { jest } from '@jest/globals';
import { once } from 'node:events';
import { createServer, Socket, type AddressInfo } from 'node:net';
import { DeadlineQueue } from '../../lib/resilience/deadline.queue.js';
import { RateLimitTimeoutError } from '../../lib/resilience/rate-limit-timeout.error.js';

/** A promise settled from outside, as a store's reply is. */
function deferred<T = string>() {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** What each raced promise came to, by name, in the order they settled. */
function outcomes() {
  const seen: string[] = [];
  const watch = (name: string, raced: Promise<unknown>) =>
    raced.then(
      (value) => seen.push(`${name}: ${String(value)}`),
      (error: Error) => seen.push(`${name}: ${error instanceof RateLimitTimeoutError ? 'timeout' : error.message}`),
    );
  return { seen, watch };
}

describe('DeadlineQueue', () => {
  // A timed-out call is rejected from a setImmediate set by the timer. The fake setImmediate, set during a tick, runs
  // 1 ms later: on fake timers a call made at t with timeoutMs 10 is rejected at t + 11, as it was with a timer per call.
  describe('on fake timers', () => {
    beforeEach(() => jest.useFakeTimers());
    afterEach(() => jest.useRealTimers());
    let startedAt: number;
    beforeEach(() => {
      startedAt = performance.now();
    });
    /** Moves the fake clock to `t` ms after the test began. */
    const at = async (t: number) => jest.advanceTimersByTimeAsync(t - (performance.now() - startedAt));

    it('settles as the promise did when it settles in time, and leaves no timer behind', async () => {
      const queue = new DeadlineQueue(10);
      const ok = deferred();
      const failing = deferred();
      const { seen, watch } = outcomes();
      watch('ok', queue.race(ok.promise));
      watch('failing', queue.race(failing.promise));
      expect(jest.getTimerCount()).toBe(1);
      await at(9);
      ok.resolve('yes');
      failing.reject(new Error('ECONNREFUSED'));
      await at(9);
      expect(seen).toEqual(['ok: yes', 'failing: ECONNREFUSED']);
      expect(jest.getTimerCount()).toBe(0);
    });

    it('rejects the calls that do not settle with RateLimitTimeoutError once timeoutMs passed, oldest first', async () => {
      const queue = new DeadlineQueue(10);
      const { seen, watch } = outcomes();
      watch('a', queue.race(new Promise(() => undefined)));
      await at(3);
      watch('b', queue.race(new Promise(() => undefined)));
      watch('c', queue.race(new Promise(() => undefined)));
      await at(10);
      expect(seen).toEqual([]);
      await at(11);
      expect(seen).toEqual(['a: timeout']);
      await at(13);
      expect(seen).toEqual(['a: timeout']);
      await at(14);
      expect(seen).toEqual(['a: timeout', 'b: timeout', 'c: timeout']);
      expect(jest.getTimerCount()).toBe(0);
    });

    it('keeps the message of the timeout', async () => {
      const queue = new DeadlineQueue(20);
      const caught = queue.race(new Promise(() => undefined)).catch((error: unknown) => error);
      await at(21);
      const error = await caught;
      expect(error).toBeInstanceOf(RateLimitTimeoutError);
      expect((error as Error).message).toBe('The rate-limit store did not answer within 20 ms');
    });

    it('does not delay a later deadline when the oldest call settled', async () => {
      const queue = new DeadlineQueue(10);
      const first = deferred();
      const { seen, watch } = outcomes();
      watch('first', queue.race(first.promise));
      await at(5);
      watch('second', queue.race(new Promise(() => undefined)));
      await at(6);
      first.resolve('in time');
      await at(15);
      expect(seen).toEqual(['first: in time']);
      await at(16);
      expect(seen).toEqual(['first: in time', 'second: timeout']);
      expect(jest.getTimerCount()).toBe(0);
    });

    it('does not time out a call that settled out of order behind one that times out', async () => {
      const queue = new DeadlineQueue(10);
      const second = deferred();
      const { seen, watch } = outcomes();
      watch('first', queue.race(new Promise(() => undefined)));
      watch('second', queue.race(second.promise));
      await at(4);
      second.resolve('in time');
      await at(11);
      expect(seen).toEqual(['second: in time', 'first: timeout']);
      expect(jest.getTimerCount()).toBe(0);
    });

    it('keeps working past its first capacity, wrapping around, with calls settling out of order', async () => {
      const queue = new DeadlineQueue(10);
      const calls = Array.from({ length: 100 }, () => deferred<number>());
      const raced = calls.map((call) => queue.race(call.promise).catch((error: unknown) => error));
      const answered = (i: number) => i < 60 || i % 3 === 1;
      calls.forEach((call, i) => {
        if (answered(i)) call.resolve(i);
      });
      await at(5);
      // The first 60 left the ring: these calls wrap around its end, then make it grow.
      const later = Array.from({ length: 100 }, () => deferred<number>());
      const racedLater = later.map((call) => queue.race(call.promise).catch((error: unknown) => error));
      later.forEach((call, i) => call.resolve(1000 + i));
      await at(11);
      const settled = await Promise.all([...raced, ...racedLater]);
      settled.slice(0, 100).forEach((outcome, i) => expect(outcome).toEqual(answered(i) ? i : new RateLimitTimeoutError(10)));
      expect(settled.slice(100)).toEqual(later.map((_, i) => 1000 + i));
      expect(jest.getTimerCount()).toBe(0);
    });

    it('arms no timer while no call waits, and one for many calls', async () => {
      const queue = new DeadlineQueue(10);
      expect(jest.getTimerCount()).toBe(0);
      const calls = Array.from({ length: 50 }, () => deferred());
      const raced = calls.map((call) => queue.race(call.promise));
      expect(jest.getTimerCount()).toBe(1);
      for (const call of calls) call.resolve('ok');
      await Promise.all(raced);
      expect(jest.getTimerCount()).toBe(0);
    });
  });

  // Redis answers at once, but the event loop is blocked past timeoutMs. Node runs expired timers before reading
  // sockets: the timeout must not win against a reply that was already waiting (Redis counted that request).
  it('lets a reply already waiting in the socket win after the event loop was blocked past timeoutMs', async () => {
    const server = createServer();
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const accepted = once(server, 'connection') as Promise<[Socket]>;
    const client = new Socket();
    client.connect((server.address() as AddressInfo).port, '127.0.0.1');
    await once(client, 'connect');
    const [serverSide] = await accepted;
    try {
      const queue = new DeadlineQueue(20);
      const reply = once(client, 'data').then(([data]) => String(data));
      const raced = queue.race(reply).catch((error: unknown) => error);
      serverSide.write('reply');
      const until = performance.now() + 60;
      while (performance.now() < until) {
        // blocked: the reply sits in the client's socket, unread, while the deadline passes
      }
      expect(await raced).toBe('reply');
    } finally {
      client.destroy();
      serverSide.destroy();
      server.close();
    }
  });

  it('still times out, on real timers, a call that gets no reply', async () => {
    const queue = new DeadlineQueue(5);
    const startedAt = performance.now();
    await expect(queue.race(new Promise(() => undefined))).rejects.toBeInstanceOf(RateLimitTimeoutError);
    expect(performance.now() - startedAt).toBeGreaterThanOrEqual(5);
  });
});
