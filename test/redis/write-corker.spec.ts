import type { Redis } from 'ioredis';
import { defineRule, RedisStore } from '../../lib/index.js';
import { ManualClock } from '../support/manual.clock.js';
import { startRedis, uniquePrefix, type TestRedis } from '../support/redis-server.js';

type Chunks = { chunk: unknown }[];
type Writable = { _write(chunk: unknown, encoding: string, cb: () => void): void; _writev(chunks: Chunks, cb: () => void): void };

/**
 * With coalescing off, the script calls made in one turn share socket writes (lib/stores/redis-write.corker.ts), at
 * most 32 to a write: with a turn's calls all in one write, the app and Redis took turns, each idle while the other
 * worked, and token bucket at 200 in flight fell from 113k to 60k decisions/s.
 */
describe('RedisStore with coalescing off: socket writes', () => {
  let redis: TestRedis;
  let client: Redis;
  beforeAll(async () => {
    redis = await startRedis();
    client = redis.client();
  });
  afterAll(() => redis.stop());

  /** The number of calls in each socket write while `run` runs. */
  async function writesDuring(run: () => Promise<unknown>): Promise<number[]> {
    const socket = (client as unknown as { stream: Writable }).stream;
    const writes: number[] = [];
    const { _write: write, _writev: writev } = socket;
    socket._write = function (chunk, encoding, cb) {
      writes.push(1);
      write.call(this, chunk, encoding, cb);
    };
    socket._writev = function (chunks, cb) {
      writes.push(chunks.length);
      writev.call(this, chunks, cb);
    };
    try {
      await run();
    } finally {
      socket._write = write;
      socket._writev = writev;
    }
    return writes;
  }

  it('sends the 100 calls of one turn in writes of at most 32 calls, each decided once', async () => {
    // At one instant of a clock of the test's: on Redis's, a token would come back every 60 ms of a slow run.
    const store = new RedisStore(client, { keyPrefix: uniquePrefix(), coalesce: false, clock: new ManualClock().now });
    const rule = defineRule({ algorithm: 'token-bucket', limit: 1000, window: '1m' }, 'tb');
    await store.consume('warm-up', rule); // the script's first call on the connection goes as EVAL

    let remaining: number[] = [];
    const writes = await writesDuring(async () => {
      const decisions = await Promise.all(Array.from({ length: 100 }, () => store.consume('k', rule)));
      remaining = decisions.map((d) => d.remaining);
    });

    expect(writes).toEqual([32, 32, 32, 4]);
    expect(remaining).toEqual(Array.from({ length: 100 }, (_, i) => 999 - i));
  });

  it('sends a lone call in a write of its own', async () => {
    const store = new RedisStore(client, { keyPrefix: uniquePrefix(), coalesce: false });
    const rule = defineRule({ algorithm: 'fixed-window', limit: 10, window: '1m' }, 'fw');
    await store.consume('warm-up', rule);
    expect(await writesDuring(() => store.consume('k', rule))).toEqual([1]);
  });
});
