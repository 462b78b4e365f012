import { defineRule, RateLimitDeadlineError, RedisStore } from '../../lib/index.js';
import { startRedis, uniquePrefix, type TestRedis } from '../support/redis-server.js';
import { PATIENT_TIMEOUT_MS } from '../support/store-timeout.js';

// A stalled Redis (SIGSTOP) keeps the connection open; what the client sent meanwhile runs when it resumes.
describe('command deadlines on a stalled Redis', () => {
  let redis: TestRedis;
  beforeAll(async () => {
    redis = await startRedis({ own: true });
  });
  afterAll(async () => {
    redis.process?.kill('SIGCONT');
    await redis.stop();
  });

  const rule = defineRule({ algorithm: 'sliding-log', limit: 10, window: '1m' }, 'deadline');

  it('records nothing for a command that ran after the caller had given up', async () => {
    const store = new RedisStore(redis.client(), { keyPrefix: uniquePrefix(), timeoutMs: 50 });
    await store.consume('k', rule); // measures Redis's clock as a side effect
    await store.peek('k', rule);
    redis.process!.kill('SIGSTOP');
    const late = store.consume('k', rule);
    // Redis's own TIME must pass the deadline while it is stopped: real time, there is no clock to move.
    await new Promise((resolve) => setTimeout(resolve, 150));
    redis.process!.kill('SIGCONT');
    await expect(late).rejects.toBeInstanceOf(RateLimitDeadlineError);
    // peek answers as a consume would: one unit recorded before the stall, so 8 would be left after another.
    expect(await store.peek('k', rule)).toMatchObject({ remaining: 8 });
  });

  it('records a command that arrives in time', async () => {
    // In time on a loaded machine too: a deadline of 50 ms is one a round trip can miss there.
    const store = new RedisStore(redis.client(), { keyPrefix: uniquePrefix(), timeoutMs: PATIENT_TIMEOUT_MS });
    await store.consume('k', rule);
    expect(await store.consume('k', rule)).toMatchObject({ allowed: true, remaining: 8 });
  });

  it('carries no deadline with an injected clock, whose time Redis cannot compare', async () => {
    let now = 1_700_000_000_000;
    const store = new RedisStore(redis.client(), { keyPrefix: uniquePrefix(), timeoutMs: 50, clock: () => now });
    await store.consume('k', rule);
    now += 1000;
    expect(await store.consume('k', rule)).toMatchObject({ allowed: true, remaining: 8 });
  });
});
