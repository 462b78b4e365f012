import { connect, createServer, type Server, type Socket } from 'node:net';

/** A TCP proxy in front of a Redis: see `slowRepliesProxy`. */
export interface SlowRepliesProxy {
  port: number;
  /** Script calls (EVALSHA, EVAL or FCALL) passed on to Redis so far. */
  readonly scriptCalls: number;
  /** `scriptCalls` when each reply was passed back, in order. */
  readonly scriptCallsAtReplies: number[];
  close(): Promise<void>;
}

const SCRIPT_CALL = /\r\n(?:evalsha|eval|fcall)\r\n/gi;

/**
 * A TCP proxy in front of the Redis on `port` that passes commands on at once and holds every reply for `delayMs`:
 * Redis runs a command in time, and its caller reads the reply long after. It counts the script calls it passed on,
 * so that a test can tell what was sent before a reply came back.
 */
export async function slowRepliesProxy(port: number, delayMs: number): Promise<SlowRepliesProxy> {
  const sockets = new Set<Socket>();
  let scriptCalls = 0;
  const scriptCallsAtReplies: number[] = [];
  const server: Server = createServer((client) => {
    const upstream = connect(port, '127.0.0.1');
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('error', () => undefined);
      s.on('close', () => sockets.delete(s));
    }
    client.on('data', (chunk) => {
      // A command split across chunks is rare on loopback, and the tests that count send small ones.
      scriptCalls += chunk.toString('latin1').match(SCRIPT_CALL)?.length ?? 0;
      upstream.write(chunk);
    });
    // Timers of one delay fire in the order they were set: the replies keep their order.
    upstream.on('data', (chunk) =>
      setTimeout(() => {
        if (!client.writable) return;
        scriptCallsAtReplies.push(scriptCalls);
        client.write(chunk);
      }, delayMs),
    );
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as { port: number }).port,
    get scriptCalls() {
      return scriptCalls;
    },
    scriptCallsAtReplies,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
