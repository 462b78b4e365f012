import type { Redis } from 'ioredis';
import { defineRule, RedisStore } from '../../lib/index.js';
import { ManualClock } from '../support/manual.clock.js';
import { startRedis, uniquePrefix, type TestRedis } from '../support/redis-server.js';

const WINDOW_MS = 60_000;
const fixed = defineRule({ algorithm: 'fixed-window', limit: 100, window: WINDOW_MS, localBudget: { maxUnits: 50 } }, 'fw');
const bucket = defineRule({ algorithm: 'token-bucket', limit: 100, window: WINDOW_MS, localBudget: { maxUnits: 50 } }, 'tb');

/**
 * The store's two local-budget calls (RedisStore.budgets: the driver's 'l' take and 'g' give-back), coalesced and sent
 * one script call each: a take is all or nothing and says until when its units count; a give-back is applied only
 * until then.
 */
describe.each([true, false])('local-budget calls of RedisStore, coalescing %s', (coalesce) => {
  let redis: TestRedis;
  let client: Redis;
  beforeAll(async () => {
    redis = await startRedis();
    client = redis.client();
  });
  afterAll(() => redis.stop());

  function store(): { store: RedisStore; clock: ManualClock } {
    const clock = new ManualClock();
    // 10 s into a window.
    clock.set(clock.ms - (clock.ms % WINDOW_MS) + 10_000);
    return { store: new RedisStore(client, { keyPrefix: uniquePrefix(), clock: clock.now, coalesce }), clock };
  }

  it("takes units all or nothing, until its fixed window's end", async () => {
    const { store: s, clock } = store();
    const grant = await s.budgets.take('k', fixed, 40);
    expect(grant).toMatchObject({ units: 40, spendWithinMs: 50_000, ticket: (clock.ms + 50_000) * 1000 });
    expect(grant.decision).toMatchObject({ allowed: true, remaining: 60 });
    expect(await s.budgets.take('k', fixed, 61)).toMatchObject({ units: 0, decision: { allowed: false, remaining: 60 } });
    expect((await s.peek('k', fixed, 0)).remaining).toBe(60);
  });

  it('gives units back within their window, and none into the next', async () => {
    const { store: s, clock } = store();
    const { ticket } = await s.budgets.take('k', fixed, 40);
    await s.budgets.giveBack('k', fixed, 15, ticket);
    expect((await s.peek('k', fixed, 0)).remaining).toBe(75);
    clock.advance(50_000);
    expect((await s.consume('k', fixed)).remaining).toBe(99);
    await s.budgets.giveBack('k', fixed, 25, ticket);
    expect((await s.peek('k', fixed, 0)).remaining).toBe(99);
  });

  it("takes a token bucket's units with no end, and gives them back whenever", async () => {
    const { store: s, clock } = store();
    const grant = await s.budgets.take('k', bucket, 30);
    expect(grant).toMatchObject({ units: 30, spendWithinMs: undefined, ticket: 0 });
    clock.advance(1);
    await s.budgets.giveBack('k', bucket, 30, grant.ticket);
    expect((await s.peek('k', bucket, 0)).remaining).toBe(100);
  });
});
