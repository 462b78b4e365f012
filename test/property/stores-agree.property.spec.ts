import fc from 'fast-check';
import { defineRule, MemoryStore, RedisStore, type RateLimitAlgorithm } from '../../lib/index.js';
import { ManualClock } from '../support/manual.clock.js';
import { startRedis, uniquePrefix, type TestRedis } from '../support/redis-server.js';

const ALGORITHMS: RateLimitAlgorithm[] = ['sliding-log', 'sliding-window', 'fixed-window', 'token-bucket', 'gcra'];
const op = fc.record({
  gap: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 400 }), fc.integer({ min: 0, max: 5000 })),
  kind: fc.constantFrom('consume', 'consume', 'consume', 'peek', 'refund', 'reset'),
  cost: fc.integer({ min: 1, max: 4 }),
});

describe('the memory store and the Redis store', () => {
  let redis: TestRedis;
  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(() => redis.stop());

  it.each(ALGORITHMS)('give the same decisions for the same sequence of (time, operation, cost): %s', async (algorithm) => {
    const client = redis.client();
    const rule = defineRule({ algorithm, limit: 4, window: 2000, blockMs: algorithm === 'fixed-window' ? 3000 : 0 }, 'same');
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 40 }), async (ops) => {
        const clock = new ManualClock(1_700_000_000_123);
        const stores = [new MemoryStore({ clock: clock.now }), new RedisStore(client, { clock: clock.now, keyPrefix: uniquePrefix() })];
        for (const { gap, kind, cost } of ops) {
          clock.advance(gap);
          const answers = await Promise.all(
            stores.map(async (s) => {
              if (kind === 'consume') return s.consume('k', rule, cost);
              if (kind === 'peek') return s.peek('k', rule, cost);
              if (kind === 'refund') return s.refund('k', rule, cost);
              return s.reset('k', rule);
            }),
          );
          expect([kind, answers[1]]).toEqual([kind, answers[0]]);
        }
      }),
      { numRuns: 60 },
    );
  });
});
