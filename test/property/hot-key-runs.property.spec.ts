import fc from 'fast-check';
import type { Redis } from 'ioredis';
import { defineRule, RedisStore, type RateLimitRule } from '../../lib/index.js';
import { maxCost } from '../../lib/rules/define-rule.js';
import { ManualClock } from '../support/manual.clock.js';
import { startRedis, uniquePrefix, type TestRedis } from '../support/redis-server.js';

// A hot key's calls arrive in a row: the driver decides a run of one key's identical calls with one charge for all
// those admitted and one check for those refused after them (lua/includes/driver.lua, decide_run). Rules without a
// lockout or overrides (runs are their path), of every algorithm; each with a twin of a lower limit on the same state
// key (a live change of the limit), so that a run may start with the units left below 0.
const RULES: RateLimitRule[] = [
  defineRule({ algorithm: 'fixed-window', limit: 6, window: 2000 }, 'fw'),
  defineRule({ algorithm: 'fixed-window', limit: 2, window: 2000 }, 'fw'),
  defineRule({ algorithm: 'sliding-window', limit: 7, window: 2000, segments: 4 }, 'sw'),
  defineRule({ algorithm: 'sliding-window', limit: 3, window: 2000, segments: 4 }, 'sw'),
  defineRule({ algorithm: 'token-bucket', limit: 6, window: 2000, refill: 3 }, 'tb'),
  defineRule({ algorithm: 'token-bucket', limit: 2, window: 2000, refill: 3 }, 'tb'),
  defineRule({ algorithm: 'gcra', limit: 3, window: 2000, burst: 5 }, 'gcra'),
  defineRule({ algorithm: 'gcra', limit: 3, window: 2000, burst: 1 }, 'gcra'),
  defineRule({ algorithm: 'sliding-log', limit: 6, window: 2000 }, 'sl'),
  defineRule({ algorithm: 'sliding-log', limit: 2, window: 2000 }, 'sl'),
];

// A rule with a lockout, and one with overrides: their runs take the driver's general path, each call taking the
// run's keys again. Alone, or with each of the rules above in one all-or-nothing call.
const LOCKED = defineRule({ algorithm: 'fixed-window', limit: 4, window: 2000, lockout: 1500 }, 'locked');
const OVERRIDABLE = defineRule({ algorithm: 'token-bucket', limit: 4, window: 2000, overrides: true }, 'overridable');

// Segments of identical calls, mostly on one key: a turn is a few of them in a row.
const segment = fc.record({
  kind: fc.constantFrom('consume', 'consume', 'consume', 'peek', 'refund', 'consumeAll'),
  rule: fc.constantFrom(...RULES, LOCKED, OVERRIDABLE),
  key: fc.constantFrom('hot', 'hot', 'hot', 'cold'),
  cost: fc.integer({ min: 1, max: 3 }),
  times: fc.integer({ min: 1, max: 12 }),
});
type Segment = typeof segment extends fc.Arbitrary<infer T> ? T : never;
const turns = fc.array(fc.record({ segments: fc.array(segment, { minLength: 1, maxLength: 4 }), gap: fc.integer({ min: 0, max: 900 }) }), { minLength: 1, maxLength: 6 });

/** One call of a segment; a cost above what the rule can ever admit is cut to that (the store refuses it). */
function make(store: RedisStore, s: Segment): Promise<unknown> {
  const cost = Math.min(s.cost, maxCost(s.rule));
  if (s.kind === 'consume') return store.consume(s.key, s.rule, cost);
  if (s.kind === 'peek') return store.peek(s.key, s.rule, cost);
  if (s.kind === 'consumeAll') return store.consumeAll([{ key: s.key, rule: s.rule, cost }, { key: s.key, rule: s.rule === LOCKED ? OVERRIDABLE : LOCKED }]);
  return store.refund(s.key, s.rule, cost);
}

describe("a run of one key's calls in a turn, on one redis-server", () => {
  let redis: TestRedis;
  let client: Redis;
  beforeAll(async () => {
    redis = await startRedis({ own: true });
    client = redis.client();
  });
  afterAll(() => redis.stop());

  it('is decided exactly as the same calls sent one by one, in that order', async () => {
    await fc.assert(
      fc.asyncProperty(turns, async (history) => {
        const clock = new ManualClock(1_700_000_000_123);
        const coalesced = new RedisStore(client, { clock: clock.now, keyPrefix: uniquePrefix() });
        const oneByOne = new RedisStore(client, { clock: clock.now, keyPrefix: uniquePrefix(), coalesce: false });
        for (const { segments, gap } of history) {
          const calls = segments.flatMap((s) => Array.from({ length: s.times }, () => s));
          const together = await Promise.all(calls.map((s) => make(coalesced, s)));
          const alone: unknown[] = [];
          for (const s of calls) alone.push(await make(oneByOne, s));
          expect(together).toEqual(alone);
          clock.advance(gap);
        }
      }),
      { numRuns: 80 },
    );
  });

  /** How many times Redis ran `commands` (from the scripts included) while `work` ran. */
  async function commandCalls(commands: readonly string[], work: () => Promise<unknown>): Promise<number> {
    await client.config('RESETSTAT');
    await work();
    const stats = await client.info('commandstats');
    return commands.reduce((sum, command) => sum + Number(new RegExp(`^cmdstat_${command}:calls=(\\d+)`, 'm').exec(stats)?.[1] ?? 0), 0);
  }

  // Fixed window: a consume counts first (INCR, INCRBY for several units), a refusal after a run's charge reads (GET).
  const READS = {
    'sliding-window': ['hgetall'],
    'fixed-window': ['incr', 'incrby', 'get'],
    'token-bucket': ['get'],
    gcra: ['get'],
    'sliding-log': ['zcard'],
  } as const;

  /** One lone call, then a turn of 40 calls on the same key; the reads of the key Redis made, and the turn's decisions. */
  async function hotTurn(algorithm: keyof typeof READS, limit: number) {
    const rule = defineRule({ algorithm, limit, window: 60_000 }, 'hot');
    const store = new RedisStore(client, { keyPrefix: uniquePrefix() });
    let decisions: { allowed: boolean; remaining: number }[] = [];
    const reads = await commandCalls(READS[algorithm], async () => {
      const first = store.consume('hot', rule);
      decisions = await Promise.all(Array.from({ length: 40 }, () => store.consume('hot', rule)));
      await first;
    });
    return { reads, decisions };
  }

  it.each(Object.keys(READS) as (keyof typeof READS)[])("reads a %s key once for a turn of 40 calls on it that fit under its limit (it read it for each)", async (algorithm) => {
    const { reads, decisions } = await hotTurn(algorithm, 100);
    expect(decisions.map((d) => d.remaining)).toEqual(Array.from({ length: 40 }, (_, i) => 98 - i));
    // The lone first call, then the turn's one charge.
    expect(reads).toBe(2);
  });

  it.each(Object.keys(READS) as (keyof typeof READS)[])("reads a %s key four times for a turn of 40 calls on it, admitted and refused (it read it for each)", async (algorithm) => {
    const { reads, decisions } = await hotTurn(algorithm, 25);
    expect(decisions.filter((d) => d.allowed)).toHaveLength(24);
    expect(decisions.map((d) => d.remaining).slice(0, 25)).toEqual([...Array.from({ length: 24 }, (_, i) => 23 - i), 0]);
    // The lone first call; then the run: its charge of all 40 refused, its first call, one charge for the rest
    // admitted, one check for those refused.
    expect(reads).toBe(5);
  });
});
