import { Registry } from 'prom-client';
import type { Redis } from 'ioredis';
import { startRedis, type TestRedis } from '../support/redis-server.js';
import {
  APP_CLIENTS,
  commandCalls,
  maxLatency,
  metricValue,
  startResilientApp,
  Traffic,
  waitFor,
  watchUnhandledRejections,
  type Answer,
  type AppClient,
  type ResilientApp,
} from './support/resilient-app.js';

const TIMEOUT_MS = 50;
const MARGIN_MS = 150;
const CLIENT = 'c';

// SIGSTOP keeps the connection open: what the app sends meanwhile sits in Redis's socket and runs on SIGCONT,
// long after the app gave up on it. The deadline each script carries must make those runs count nothing, whatever
// the client: each library's own timeout (node-redis has none once a command is written; GLIDE's requestTimeout,
// 5 s here, outlasts the stall) leaves the calls in Redis's socket.
describe.each<AppClient>(APP_CLIENTS)('Redis stalled by SIGSTOP, the app on %s', (client) => {
  let redis: TestRedis;
  let admin: Redis;
  let rl: ResilientApp;
  const registry = new Registry();
  let rejections: ReturnType<typeof watchUnhandledRejections>;
  let during: Answer[];
  let storeCallsDuringStall: number;
  let lateRuns: number;
  let firstDuring: number;

  beforeAll(async () => {
    rejections = watchUnhandledRejections();
    redis = await startRedis({ own: true });
    admin = redis.client();
    rl = await startResilientApp(redis, { failurePolicy: 'memory', timeoutMs: TIMEOUT_MS, metrics: { registry } }, client);
    // Decided on Redis; the first call also measures Redis's clock, which the deadlines are expressed in.
    for (let i = 0; i < 3; i++) await rl.get(CLIENT);
    await admin.config('RESETSTAT');
    const errorsBefore = await metricValue(registry, 'rate_limit_store_errors_total');
    firstDuring = rl.events.length;

    redis.process!.kill('SIGSTOP');
    const load = new Traffic(() => rl.get(CLIENT), 4);
    await waitFor('30 answers during the stall', () => load.answers.length >= 30);
    during = await load.stop();
    storeCallsDuringStall = (await metricValue(registry, 'rate_limit_store_errors_total')) - errorsBefore;
    // Every call the app gave up on was sent at least TIMEOUT_MS ago; Redis's clock must be past every deadline
    // when it resumes. Real time is the point here: there is no clock to move.
    await new Promise((resolve) => setTimeout(resolve, 20));
    redis.process!.kill('SIGCONT');
    // Redis answers in order on a connection: once this PING is answered, every command stuck before it has run.
    await rl.ping();
    const stats = await admin.info('commandstats');
    lateRuns = commandCalls(stats, 'evalsha') + commandCalls(stats, 'eval') + commandCalls(stats, 'fcall');
  });
  afterEach(() => {
    redis.process?.kill('SIGCONT');
  });
  afterAll(async () => {
    redis?.process?.kill('SIGCONT');
    rejections.dispose();
    await rl?.close();
    await redis?.stop();
  });

  it(`answers every request during the stall within timeoutMs + ${MARGIN_MS} ms`, () => {
    if (process.env.RESILIENCE_REPORT) console.log(`[stall/${client}] ${during.length} requests, max latency ${maxLatency(during).toFixed(1)} ms, ${storeCallsDuringStall} store calls timed out`);
    expect(maxLatency(during)).toBeLessThanOrEqual(TIMEOUT_MS + MARGIN_MS);
  });

  it('answers by the failure policy during the stall', () => {
    expect(during.map((a) => a.status).filter((s) => s !== 200)).toEqual([]);
    expect(rl.events.slice(firstDuring, firstDuring + during.length).map((e) => e.result.decisions[0].degraded)).toEqual(during.map(() => 'memory'));
  });

  it('sent the calls it gave up on to Redis, which ran them after SIGCONT', () => {
    expect(storeCallsDuringStall).toBeGreaterThanOrEqual(3);
    expect(lateRuns).toBe(storeCallsDuringStall);
  });

  it('counts in Redis exactly the decisions Redis made in time', async () => {
    expect(rl.admittedOnRedis(CLIENT)).toBeGreaterThan(0);
    expect(await admin.zcard(rl.stateKey(CLIENT))).toBe(rl.admittedOnRedis(CLIENT));
  });

  it('decides on Redis again once the circuit lets a probe through, still counting each decision once', async () => {
    await waitFor('a decision on Redis after SIGCONT', async () => {
      await rl.get(CLIENT);
      return rl.events.at(-1)!.result.decisions[0].degraded === undefined;
    });
    expect(await admin.zcard(rl.stateKey(CLIENT))).toBe(rl.admittedOnRedis(CLIENT));
  });

  it('raises no unhandled rejection', () => {
    expect(rejections.seen).toEqual([]);
  });
});

// The converse of a stall: Redis answers at once, but the app's event loop is busy (a long synchronous task,
// a GC pause) past timeoutMs. Node runs expired timers before reading sockets, so the timeout must not win
// against a reply that was already there: Redis counted that request.
// node-redis writes the commands of a turn from a setImmediate (its auto-pipelining): a call made just before the
// loop blocks goes out only after it, past its deadline. There no reply can be there in time: Redis records
// nothing, and the failure policy decides.
const WRITES_AFTER_THE_TURN: AppClient[] = ['node-redis 5', 'node-redis 6'];
describe.each<AppClient>(APP_CLIENTS)('a call made just before the event loop was blocked, the app on %s', (client) => {
  // Redis must answer within it while the app is blocked: a redis-server on a loaded machine can wait 50 ms for a CPU.
  const BLOCKED_TIMEOUT_MS = 250;
  const writtenLater = WRITES_AFTER_THE_TURN.includes(client);
  let redis: TestRedis;
  let rl: ResilientApp;

  beforeAll(async () => {
    redis = await startRedis({ own: true });
    rl = await startResilientApp(redis, { failurePolicy: 'memory', timeoutMs: BLOCKED_TIMEOUT_MS }, client);
  });
  afterAll(async () => {
    await rl?.close();
    await redis?.stop();
  });

  const title = writtenLater
    ? 'is sent after the block, past its deadline: decided by the failure policy, and recorded nowhere in Redis'
    : 'gets a reply that arrived in time, which is the decision, so that Redis counts nothing the app decided otherwise';
  it(title, async () => {
    const admin = redis.client();
    // Until Redis's clock is measured precisely (at most three measurements are set aside as imprecise, see
    // RedisClockOffset): a measurement (TIME) sent with the call under test would go before it, and GLIDE holds a
    // write back until the one before it is flushed, after the block.
    const first = [];
    for (let i = 0; i < 4; i++) first.push(await rl.service.consume('k', 'default'));
    await new Promise((resolve) => setTimeout(resolve, 10));
    const pending = rl.service.consume('k', 'default');
    const until = performance.now() + 3 * BLOCKED_TIMEOUT_MS;
    while (performance.now() < until) {
      // blocked: the command is on its way (or, with node-redis, waits for the turn to end), nobody reads a reply
    }
    const late = await pending;
    expect(late.degraded).toBe(writtenLater ? 'memory' : undefined);
    expect(await admin.zcard(rl.serviceStateKey('k'))).toBe([...first, late].filter((d) => !d.degraded).length);
  });
});
