import type { Redis } from 'ioredis';
import { defineRule, MemoryStore, RedisStore, ResilientStore, ruleKeys, type Decision, type RedisClientLike } from '../../lib/index.js';
import { startRedis, uniquePrefix, type TestRedis } from '../support/redis-server.js';
import { APP_CLIENTS, suiteClients, waitFor, watchUnhandledRejections, type AppClient } from './support/resilient-app.js';

// Long enough for Redis to answer the first call on a loaded machine; the calls below hold it several times longer.
const TIMEOUT_MS = 100;
const CALLERS = 256;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
// The largest sliding log a rule may have (MAX_SLIDING_LOG_LIMIT): each admission adds 1,000 sorted-set entries,
// about a millisecond of Redis's time, so 256 of them hold Redis for longer than the callers wait.
const heavy = defineRule({ algorithm: 'sliding-log', limit: 1000, window: '1h' }, 'heavy');

// Calls made in one turn used to go to Redis as one script call, checked against its deadline once, before its first
// call: the callers that gave up on it were counted in Redis all the same, and their timeouts opened the breaker
// while Redis was answering (the case: 64 consumes of cost 1,000, timeoutMs 50).
describe.each<AppClient>(APP_CLIENTS)('concurrent heavy sliding-log consumes on a healthy Redis, through %s', (library) => {
  let redis: TestRedis;
  let admin: Redis;
  let client: RedisClientLike;
  const clients = suiteClients(library);
  let rejections: ReturnType<typeof watchUnhandledRejections>;
  beforeAll(async () => {
    rejections = watchUnhandledRejections();
    redis = await startRedis({ own: true });
    admin = redis.client();
    client = await clients.open(redis.port);
  });
  afterAll(async () => {
    rejections.dispose();
    await clients.closeAll();
    await redis?.stop();
  });

  /** Consumes of cost 1,000, one key each, made in one turn; their decisions, and what Redis counted for each key. */
  async function consumeAtOnce(): Promise<{ circuit: string[]; errors: string[]; decisions: Decision[]; counted: () => Promise<number[]> }> {
    const prefix = uniquePrefix();
    const redisStore = new RedisStore(client, { keyPrefix: prefix, timeoutMs: TIMEOUT_MS });
    const circuit: string[] = [];
    const errors: string[] = [];
    const store = new ResilientStore(redisStore, new MemoryStore({ keyPrefix: prefix }), {
      timeoutMs: TIMEOUT_MS,
      failurePolicy: 'memory',
      onCircuitChange: (state) => circuit.push(state),
      onError: (error, op) => errors.push(`${op}: ${error.name}`),
    });
    // Redis's clock is measured and the script loaded: only the calls below can be late.
    await store.consume('warm', heavy, 1);
    const decisions = await Promise.all(Array.from({ length: CALLERS }, (_, i) => store.consume(`k${i}`, heavy, 1000)));
    if (process.env.RESILIENCE_REPORT) console.log(`[heavy batch/${library}] ${decisions.filter((d) => !d.degraded).length} of ${CALLERS} decided by Redis`);
    const counted = () => Promise.all(decisions.map((_, i) => admin.zcard(ruleKeys(prefix, heavy, `k${i}`).state)));
    return { circuit, errors, decisions, counted };
  }

  it('leaves nothing counted in Redis for a caller that gave up and was decided by the failure policy', async () => {
    const { decisions, counted, errors } = await consumeAtOnce();
    expect(decisions.every((d) => d.allowed)).toBe(true);
    // Caller by caller: 1,000 entries in Redis exactly for those Redis decided. A reply that came back after its caller
    // gave up is given back (a refund, sent once it is read): the counts may take a moment to settle.
    const expected = decisions.map((d) => (d.degraded ? 0 : 1000));
    await waitFor('Redis to count the callers it decided', async () => (await counted()).join() === expected.join(), 10_000).catch(() => undefined);
    // With the failures other than the callers' timeouts (a refund that failed), which tell why a count is left.
    const outcome = async () => ({ counted: await counted(), otherErrors: errors.filter((e) => !e.startsWith('consume:')) });
    expect(await outcome()).toEqual({ counted: expected, otherErrors: [] });
    // And they stay so: nothing written later.
    await sleep(100);
    expect(await outcome()).toEqual({ counted: expected, otherErrors: [] });
  });

  it('never opens the circuit: Redis answered while those callers waited', async () => {
    const { circuit, decisions } = await consumeAtOnce();
    expect(decisions.filter((d) => !d.degraded).length).toBeGreaterThan(0);
    expect(circuit).toEqual([]);
  });

  it('raises no unhandled rejection', () => {
    expect(rejections.seen).toEqual([]);
  });
});
