import type { Redis } from 'ioredis';
import { Registry } from 'prom-client';
import { startRedis, type TestRedis } from '../support/redis-server.js';
import { commandCalls, killRedis, metricValue, startResilientApp, type Answer, type ResilientApp } from './support/resilient-app.js';

const FLOOD = 300;
const CONCURRENCY = 10;
// Timing is not what these tests are about: a generous timeout keeps a busy machine from degrading a decision.
const TIMEOUT_MS = 1_000;

/** FLOOD requests from one client, CONCURRENCY at a time. */
async function flood(rl: ResilientApp, client: string): Promise<Answer[]> {
  const answers: Answer[] = [];
  let sent = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (sent < FLOOD) {
        sent++;
        answers.push(await rl.get(client));
      }
    }),
  );
  return answers;
}

/** Script runs on Redis (EVALSHA, or EVAL after a NOSCRIPT) since the last CONFIG RESETSTAT. */
async function scriptRuns(admin: Redis): Promise<number> {
  const stats = await admin.info('commandstats');
  return commandCalls(stats, 'evalsha') + commandCalls(stats, 'eval') + commandCalls(stats, 'fcall');
}

// A client refused with Retry-After: T is refused again until T has passed, whatever Redis would say; the
// local block cache answers those refusals in-process instead of asking Redis each time.
describe('local block cache under a flood from one refused client', () => {
  let redis: TestRedis;
  let admin: Redis;

  beforeAll(async () => {
    redis = await startRedis({ own: true });
    admin = redis.client();
  });
  afterAll(() => redis?.stop());

  async function refusedThenFlooded(options: { blockCache?: boolean; registry?: Registry; refuseFirst?: boolean }) {
    const rl = await startResilientApp(redis, {
      timeoutMs: TIMEOUT_MS,
      blockCache: options.blockCache,
      metrics: options.registry ? { registry: options.registry } : false,
      defaultRule: { limit: 2, window: '30s', algorithm: 'sliding-log', key: 'header:x-client' },
    });
    try {
      const first: Answer[] = [];
      if (options.refuseFirst !== false) {
        for (let i = 0; i < 3; i++) first.push(await rl.get('flooder'));
        expect(first.map((a) => a.status)).toEqual([200, 200, 429]);
      }
      await admin.config('RESETSTAT');
      const answers = await flood(rl, 'flooder');
      return { rl, first, answers, storeCalls: await scriptRuns(admin) };
    } finally {
      await rl.close();
    }
  }

  it('answers most of the flood without calling Redis', async () => {
    const registry = new Registry();
    const { rl, answers, storeCalls } = await refusedThenFlooded({ registry });
    const saved = FLOOD - storeCalls;
    if (process.env.RESILIENCE_REPORT) console.log(`[block-cache] ${FLOOD} refused requests (${CONCURRENCY} concurrent): ${storeCalls} store calls, ${saved} saved (${((100 * saved) / FLOOD).toFixed(1)}%)`);
    expect(answers.every((a) => a.status === 429)).toBe(true);
    expect(storeCalls).toBeLessThanOrEqual(FLOOD * 0.05);
    expect(rl.service.blockCache!.hits).toBe(saved);
    expect(await metricValue(registry, 'rate_limit_local_block_hits_total')).toBe(saved);
    expect(rl.events.filter((e) => e.fromBlockCache)).toHaveLength(saved);
  });

  it('calls Redis only until it has seen the first refusal when the flood starts on a fresh client', async () => {
    const { answers, storeCalls } = await refusedThenFlooded({ refuseFirst: false });
    if (process.env.RESILIENCE_REPORT) console.log(`[block-cache] ${FLOOD} requests from a fresh client, limit 2 (${CONCURRENCY} concurrent): ${storeCalls} store calls`);
    expect(answers.filter((a) => a.status === 200)).toHaveLength(2);
    // The two admitted, then at most one refusal per request already in flight when the first one was cached.
    expect(storeCalls).toBeLessThanOrEqual(2 + CONCURRENCY);
  });

  it('answers a cached refusal as Redis did: 429, the same body, a Retry-After no longer than Redis said', async () => {
    const { first, answers } = await refusedThenFlooded({});
    const fromRedis = first[2].body as { retryAfter: number };
    for (const answer of answers) {
      expect(answer.body).toEqual({ statusCode: 429, message: 'Too Many Requests', retryAfter: expect.any(Number) });
      const { retryAfter } = answer.body as { retryAfter: number };
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(fromRedis.retryAfter);
      expect(answer.headers['retry-after']).toBe(String(retryAfter));
    }
  });

  it('calls Redis for every request of the flood when the cache is off', async () => {
    const { storeCalls } = await refusedThenFlooded({ blockCache: false });
    expect(storeCalls).toBe(FLOOD);
  });
});

// A refusal the failure policy made says nothing about the client: it must not outlive the outage.
describe('local block cache and a refusal by the closed failure policy', () => {
  let redis: TestRedis;
  let rl: ResilientApp;

  beforeAll(async () => {
    redis = await startRedis({ own: true });
    rl = await startResilientApp(redis, { failurePolicy: 'closed', circuitBreaker: { minOpenMs: 50, maxOpenMs: 100 } });
  });
  afterAll(async () => {
    await rl?.close();
    await redis?.stop();
  });

  it('is not cached: the client passes as soon as Redis is back', async () => {
    await rl.get('c');
    await killRedis(redis);
    expect((await rl.get('c')).status).toBe(429);
    await redis.restart!();
    let answer: Answer;
    const deadline = performance.now() + 5_000;
    do answer = await rl.get('c');
    while (answer.status === 429 && performance.now() < deadline);
    expect(answer.status).toBe(200);
    expect(rl.events.filter((e) => e.fromBlockCache)).toEqual([]);
  });
});
