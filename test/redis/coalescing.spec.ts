import type { Redis } from 'ioredis';
import { defineRule, RateLimitDeadlineError, RedisStore } from '../../lib/index.js';
import { ManualClock } from '../support/manual.clock.js';
import { scriptCalls, startRedis, uniquePrefix, type TestRedis } from '../support/redis-server.js';

const rule = defineRule({ algorithm: 'fixed-window', limit: 100, window: '1h' }, 'batch');

describe('RedisStore coalescing', () => {
  let redis: TestRedis;
  let admin: Redis;
  beforeAll(async () => {
    redis = await startRedis({ own: true });
    admin = redis.client();
  });
  afterAll(async () => {
    redis.process?.kill('SIGCONT');
    await redis.stop();
  });

  function store(options: ConstructorParameters<typeof RedisStore>[1] = {}) {
    const clock = new ManualClock();
    return new RedisStore(redis.client(), { clock: clock.now, keyPrefix: uniquePrefix(), ...options });
  }

  it('writes a lone call to the socket before the code that made it returns, waiting for no later turn', async () => {
    const s = store();
    await s.peek('warm', rule); // connected, and the script loaded
    const socket = (s.client as Redis).stream;
    const before = socket.bytesWritten;
    const decision = s.consume('k', rule);
    expect(socket.bytesWritten).toBeGreaterThan(before);
    expect(await decision).toMatchObject({ allowed: true, remaining: 99 });
  });

  it('decides the calls made together, while one is in flight, in one script call', async () => {
    const s = store();
    await s.peek('warm', rule);
    await admin.config('RESETSTAT');
    const decisions = await Promise.all(Array.from({ length: 30 }, () => s.consume('k', rule)));
    // The first goes alone at once; the 29 made while it is in flight go together (maxBatch is 64).
    expect(await scriptCalls(admin)).toBe(2);
    expect(decisions.map((d) => d.remaining)).toEqual(Array.from({ length: 30 }, (_, i) => 99 - i));
  });

  it('sends the calls made in separate callbacks of one turn of the event loop, while a batch is in flight, as one script call', async () => {
    // Two HTTP requests read in one turn reach the guard in two I/O callbacks: their decisions share one batch.
    const s = store();
    await s.peek('warm', rule);
    await admin.config('RESETSTAT');
    redis.process!.kill('SIGSTOP');
    const first = s.consume('k', rule);
    const later = await new Promise<Promise<unknown>[]>((resolve) => {
      const calls: Promise<unknown>[] = [];
      setImmediate(() => calls.push(s.consume('k', rule)));
      setImmediate(() => {
        calls.push(s.consume('k', rule));
        // The batch goes out in the next turn's check phase.
        setImmediate(() => setImmediate(() => resolve(calls)));
      });
    });
    redis.process!.kill('SIGCONT');
    await Promise.all([first, ...later]);
    expect(await scriptCalls(admin)).toBe(2);
  });

  it('sends identical calls in a row as one argument (on one key: the key once), and decides each in its place', async () => {
    const s = store();
    await s.peek('warm', rule);
    await admin.config('SET', 'slowlog-log-slower-than', '0');
    await admin.slowlog('RESET');
    try {
      const first = s.consume('lone', rule); // goes alone; the others wait for it, in one batch
      const batch = [s.consume('a', rule), s.consume('a', rule), s.consume('b', rule), s.peek('a', rule), s.consume('a', rule), s.consume('c', rule, 2)];
      const decisions = await Promise.all([first, ...batch]);
      expect(decisions.map((d) => d.remaining)).toEqual([99, 99, 98, 99, 97, 97, 98]);
      const entries = (await admin.slowlog('GET', 100)) as [number, number, number, string[]][];
      const sent = entries.map((entry) => entry[3]).find((args) => ['evalsha', 'fcall'].includes(args[0].toLowerCase()) && args[2] === '5');
      // After the sha, the key count and the 5 keys ('a' once for the two consumes of it in a row, then 'b', 'a', 'a',
      // 'c'): now, deadline, 5 call arguments, 1 definition, no Cluster keys, then the calls: 2 consumes of 'a' in a
      // row, a consume (of 'b'), a peek, a consume, a consume of 2 units.
      expect(sent?.slice(3, 8)).toEqual(['a', 'b', 'a', 'a', 'c'].map((tracker) => expect.stringContaining(`{${tracker}}`)));
      expect(sent?.slice(8, 18)).toEqual([expect.any(String), expect.any(String), '5', '1', '0', '2=c1', 'c1', 'p1', 'c1', 'c1*2']);
    } finally {
      await admin.config('SET', 'slowlog-log-slower-than', '10000');
    }
  });

  it('sends a lone call of one unit under one rule without a lockout in the short form, and any other in the batch form', async () => {
    const s = store({ coalesce: false });
    const locked = defineRule({ algorithm: 'token-bucket', limit: 2, window: '1m', lockout: '1m' }, 'locked');
    const bucket = defineRule({ algorithm: 'token-bucket', limit: 2, window: '1m' }, 'bucket');
    await s.peek('warm', bucket); // the script loaded: the calls below go as EVALSHA, or FCALL once its library is
    await admin.config('SET', 'slowlog-log-slower-than', '0');
    await admin.slowlog('RESET');
    try {
      // Each awaited, so that SLOWLOG lists them in this order (newest first).
      // A peek reports the state after the units it asks about, as a consume would leave it.
      const decided = [await s.consume('a', bucket), await s.peek('a', bucket), await s.consume('a', bucket), await s.consume('a', bucket)];
      await s.refund('a', bucket);
      const ofLockout = await s.consume('b', locked);
      const ofTwo = await s.consume('c', bucket, 2);
      expect(decided.map((d) => [d.allowed, d.remaining])).toEqual([[true, 1], [true, 0], [true, 0], [false, 0]]);
      // The refund gave one token back: a peek of one unit is admitted again.
      expect(await s.peek('a', bucket)).toMatchObject({ allowed: true, remaining: 0 });
      expect([ofLockout.allowed, ofTwo.allowed]).toEqual([true, true]);
      const entries = (await admin.slowlog('GET', 100)) as [number, number, number, string[]][];
      const sent = entries
        .map((entry) => entry[3])
        .filter((args) => ['evalsha', 'fcall'].includes(args[0].toLowerCase()))
        .reverse()
        .map((args) => args.slice(3 + Number(args[2]) + 2));
      // After the sha, the key count, the keys, now and the deadline: the short form is the operation and the rule's
      // definition (token bucket: id, limit, window ms, lockout ms, refill, in one argument); the batch form counts the
      // call arguments.
      expect(sent.slice(0, 7)).toEqual([
        ['c', 'tb,2,60000,0,2'],
        ['p', 'tb,2,60000,0,2'],
        ['c', 'tb,2,60000,0,2'],
        ['c', 'tb,2,60000,0,2'],
        ['r', 'tb,2,60000,0,2'],
        ['1', '1', '0', 'c1', 'tb,2,60000,60000,2'],
        ['1', '1', '0', 'c1*2', 'tb,2,60000,0,2'],
      ]);
    } finally {
      await admin.config('SET', 'slowlog-log-slower-than', '10000');
    }
  });

  it('sends a batch no larger than coalesce.maxBatch', async () => {
    const s = store({ coalesce: { maxBatch: 10 } });
    await s.peek('warm', rule);
    await admin.config('RESETSTAT');
    await Promise.all(Array.from({ length: 41 }, () => s.consume('k', rule)));
    expect(await scriptCalls(admin)).toBe(5);
  });

  it('with coalescing off, writes the calls made in one turn to the socket together, each still a script call of its own', async () => {
    const s = store({ coalesce: false });
    await s.peek('warm', rule);
    await admin.config('RESETSTAT');
    const decisions = Array.from({ length: 40 }, () => s.consume('k', rule));
    expect((await Promise.all(decisions)).map((d) => d.remaining)).toEqual(Array.from({ length: 40 }, (_, i) => 99 - i));
    expect(await scriptCalls(admin)).toBe(40);
    // Redis read them in one go (the INFO below is one more read), not one read per call.
    const reads = Number(/^total_reads_processed:(\d+)/m.exec(await admin.info('stats'))![1]);
    expect(reads).toBeLessThanOrEqual(5);
  });

  it('refuses a coalesce.maxBatch that is not an integer from 1 to 10000, naming the option', () => {
    expect(() => store({ coalesce: { maxBatch: 0 } })).toThrow('Invalid Redis store option "coalesce.maxBatch": 0 (expected an integer from 1 to 10000)');
  });

  it('decides a whole batch after SCRIPT FLUSH (NOSCRIPT), counting each call once', async () => {
    // EVALSHA only, the NOSCRIPT path this names. With function libraries the calls go as FCALL, which a SCRIPT FLUSH
    // does not touch, except in the one round trip a library takes to load: a flush then can decide a call sent
    // meanwhile after later ones (counting each once), which is a known limit, not what this pins.
    const s = store({ functions: false });
    await s.peek('warm', rule);
    await admin.script('FLUSH');
    const decisions = await Promise.all(Array.from({ length: 20 }, () => s.consume('k', rule)));
    expect(decisions.map((d) => d.remaining)).toEqual(Array.from({ length: 20 }, (_, i) => 99 - i));
    expect(await s.peek('k', rule, 0)).toMatchObject({ remaining: 80 });
  });

  it('records nothing of a batch that reaches a stalled Redis after its deadline, and fails each of its calls', async () => {
    const keyPrefix = uniquePrefix();
    const s = store({ clock: undefined, timeoutMs: 30, keyPrefix });
    // Measures Redis's clock: the calls now carry a deadline. A loaded machine can miss 30 ms: warmed up once a peek
    // came back in time.
    for (let missed = 0; ; missed++) {
      const warm = await s.peek('warm', rule).catch((error: unknown) => error);
      if (!(warm instanceof RateLimitDeadlineError)) break;
      if (missed === 50) throw warm;
    }
    redis.process!.kill('SIGSTOP');
    const calls = Array.from({ length: 10 }, () => s.consume('stalled', rule).catch((error: unknown) => error));
    await new Promise((resolve) => setTimeout(resolve, 100)); // past every deadline: real time, there is no clock to move
    redis.process!.kill('SIGCONT');
    const outcomes = await Promise.all(calls);
    expect(outcomes.every((o) => o instanceof RateLimitDeadlineError)).toBe(true);
    // Read with no deadline of its own, which a loaded machine could miss.
    expect(await store({ clock: undefined, keyPrefix }).peek('stalled', rule, 0)).toMatchObject({ remaining: 100 });
  });
});
