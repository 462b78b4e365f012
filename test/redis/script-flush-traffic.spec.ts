import { defineRule, RedisStore, safeClientOptions } from '../../lib/index.js';
import { startRedis, uniquePrefix, type TestRedis } from '../support/redis-server.js';

// ioredis resends a script once per socket on NOSCRIPT, but cannot see a SCRIPT FLUSH sent by another client:
// with calls in flight across two flushes, a resend sent as EVALSHA met NOSCRIPT again and reached the caller
// (1 to 11 calls of 200, in about one run of twenty). Many rounds here, so the race shows. FUNCTION FLUSH is sent with
// each: a call in flight as FCALL meets "Function not found" and is resent the same way, and a library loaded
// meanwhile is flushed under the calls that would use it.
describe('SCRIPT FLUSH and FUNCTION FLUSH from another client while 200 calls are in flight', () => {
  let redis: TestRedis;
  beforeAll(async () => {
    redis = await startRedis({ own: true });
  });
  afterAll(() => redis.stop());

  const windowed = defineRule({ algorithm: 'sliding-window', limit: 1_000_000, window: '1h' }, 'flush-window');
  const fixed = defineRule({ algorithm: 'fixed-window', limit: 1_000_000, window: '1h' }, 'flush-fixed');
  const ROUNDS = 30;

  it('decides every call on Redis, one rule or stacked (the combined script)', async () => {
    const admin = redis.client();
    // The module's client settings: no offline queue, no resend after a reconnect.
    const client = redis.client(safeClientOptions(50));
    await client.connect();
    const store = new RedisStore(client, { keyPrefix: uniquePrefix() });
    let failures: string[] = [];
    let decided = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const calls = Array.from({ length: 200 }, (_, i) =>
        (i % 2 === 0 ? store.consume(`k${i % 7}`, windowed) : store.consumeAll([{ key: `k${i % 7}`, rule: windowed }, { key: `k${i % 7}`, rule: fixed }])).then(
          () => decided++,
          (e: Error) => failures.push(e.message),
        ),
      );
      // Two flushes among the calls: the second can land between a resend's EVAL and the EVALSHA that follows it.
      await new Promise((resolve) => setImmediate(resolve));
      await Promise.all([admin.script('FLUSH'), admin.call('FUNCTION', 'FLUSH')]);
      await Promise.all([admin.script('FLUSH'), admin.call('FUNCTION', 'FLUSH')]);
      await Promise.all(calls);
      failures = failures.slice(0, 5);
    }
    expect(failures).toEqual([]);
    expect(decided).toBe(ROUNDS * 200);
  });
});
