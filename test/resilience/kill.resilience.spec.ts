import request from 'supertest';
import type { FailurePolicy } from '../../lib/index.js';
import { startRedis, type TestRedis } from '../support/redis-server.js';
import { CLIENT_LIBRARIES, type ClientSettings } from '../support/redis-clients.js';
import {
  killRedis,
  maxLatency,
  pendingAt,
  startResilientApp,
  Traffic,
  waitFor,
  watchUnhandledRejections,
  type Answer,
  type AppClient,
  type ResilientApp,
} from './support/resilient-app.js';

const TIMEOUT_MS = 50;
// Headroom for HTTP and Nest on top of the store's timeout; the time a loaded machine kept the process off a CPU is
// left out of each latency (maxLatency, Answer.cpuWaitMs).
const MARGIN_MS = 150;
const LIMIT = 3;

// What one client sees after the kill: 'open' admits without counting, 'closed' refuses, 'memory' keeps the limit per process.
const EXPECTED_SEQUENCE: Record<FailurePolicy, number[]> = {
  open: [200, 200, 200, 200, 200],
  closed: [429, 429, 429, 429, 429],
  memory: [200, 200, 200, 429, 429],
};

// Every policy on the client the module makes; the strictest ('memory': the limit kept per process) through each
// other library's client passed as `store` (the policies are decided above the client, the same for every one).
const CASES: [FailurePolicy, AppClient][] = [
  ...(['open', 'closed', 'memory'] as const).map((policy): [FailurePolicy, AppClient] => [policy, 'ioredis']),
  ...CLIENT_LIBRARIES.map((library): [FailurePolicy, AppClient] => ['memory', library]),
];

// Redis stays dead after these tests: GLIDE holds the requests it could not send until their requestTimeout, and
// iovalkey's disconnect() waits disconnectTimeout for its socket, closed already, to close. Either keeps the test
// process alive after its tests (jest: "A worker process has failed to exit gracefully"): both are kept short here.
const AFTER_DEATH: ClientSettings = { glideRequestTimeoutMs: 500, iovalkeyDisconnectTimeoutMs: 0 };

describe.each(CASES)('Redis SIGKILLed mid-traffic, failurePolicy %s, the app on %s', (policy, client) => {
  let redis: TestRedis;
  let rl: ResilientApp;
  let rejections: ReturnType<typeof watchUnhandledRejections>;
  let traffic: Answer[];
  let afterKill: Answer[];
  let sequence: Answer[];

  beforeAll(async () => {
    rejections = watchUnhandledRejections();
    redis = await startRedis({ own: true });
    rl = await startResilientApp(redis, {
      failurePolicy: policy,
      timeoutMs: TIMEOUT_MS,
      defaultRule: { limit: LIMIT, window: '1m', algorithm: 'sliding-log', key: 'header:x-client' },
    }, client, AFTER_DEATH);
    // A new client per request: each is the first of its key, so only the failure policy can refuse it.
    let n = 0;
    const load = new Traffic(() => rl.get(`t${n++}`), 4);
    await waitFor('20 decisions on Redis', () => rl.events.filter((e) => !e.result.decisions[0].degraded).length >= 20);
    const { signalledAt, exitedAt } = await killRedis(redis);
    await waitFor('20 answers to requests sent after the kill', () => load.answers.filter((a) => a.startedAt > exitedAt).length >= 20);
    // Latency counts from the kill on, requests in flight at that moment included.
    traffic = pendingAt(await load.stop(), signalledAt);
    afterKill = traffic.filter((a) => a.startedAt > exitedAt);
    sequence = [];
    for (let i = 0; i < 5; i++) sequence.push(await rl.get('one'));
  });
  afterAll(async () => {
    rejections.dispose();
    await rl?.close();
    await redis?.stop();
  });

  it(`answers every request within timeoutMs + ${MARGIN_MS} ms`, () => {
    const max = maxLatency([...traffic, ...sequence]);
    if (process.env.RESILIENCE_REPORT) console.log(`[kill/${policy}/${client}] ${traffic.length + sequence.length} requests, max latency ${max.toFixed(1)} ms`);
    expect(max).toBeLessThanOrEqual(TIMEOUT_MS + MARGIN_MS);
  });

  it('answers fresh clients after the kill as the policy says', () => {
    const want = policy === 'closed' ? 429 : 200;
    expect(afterKill.filter((a) => a.status !== want)).toEqual([]);
  });

  it('answers one client as the policy says', () => {
    expect(sequence.map((a) => a.status)).toEqual(EXPECTED_SEQUENCE[policy]);
  });

  it('sends the usual 429 body and Retry-After on a refusal', () => {
    const refused = sequence.find((a) => a.status === 429);
    if (policy === 'open') {
      expect(refused).toBeUndefined();
      return;
    }
    expect(refused!.body).toEqual({ statusCode: 429, message: 'Too Many Requests', retryAfter: expect.any(Number) });
    const { retryAfter } = refused!.body as { retryAfter: number };
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(refused!.headers['retry-after']).toBe(String(retryAfter));
  });

  it('marks every decision after the kill as decided by the policy', () => {
    const last = rl.events.slice(-sequence.length);
    expect(last.map((e) => e.result.decisions[0].degraded)).toEqual(sequence.map(() => policy));
  });

  it('raises no unhandled rejection', () => {
    expect(rejections.seen).toEqual([]);
  });

  it('keeps the app serving', async () => {
    await request(rl.app.getHttpServer()).get('/health').expect(200);
  });
});
