import { Controller, Get, type INestApplication } from '@nestjs/common';
import { runInThisContext } from 'node:vm';
import { Redis } from 'ioredis';
import type { Registry } from 'prom-client';
import request from 'supertest';
import {
  RATE_LIMIT_STORE,
  RateLimit,
  RateLimitModule,
  RateLimitService,
  ResilientStore,
  ruleKeys,
  SkipRateLimit,
  type RateLimitDecisionEvent,
  type RateLimitModuleOptions,
  type RedisClientLike,
  type RedisStore,
} from '../../../lib/index.js';
import { startApp } from '../../e2e/support/http-app.js';
import { cpuWaitMs } from '../../support/cpu-wait.js';
import { CLIENT_LIBRARIES, openClientWith, quietGlideLogs, type ClientLibrary, type ClientSettings, type OpenClient } from '../../support/redis-clients.js';
import { uniquePrefix, type TestRedis } from '../../support/redis-server.js';
import { PATIENT_TIMEOUT_MS } from '../../support/store-timeout.js';

export { commandCalls } from '../../support/redis-server.js';

/**
 * The client an app of these tests decides through: 'ioredis', the one the module makes from the server's URL (its
 * safe settings: no offline queue, no resend), or a client of another library passed as `store`, opened as
 * `openClient` opens it (node-redis: disableOfflineQueue; iovalkey: no offline queue, no resend, no retry; GLIDE:
 * requestTimeout 5 s).
 */
export type AppClient = 'ioredis' | ClientLibrary;
export const APP_CLIENTS: AppClient[] = ['ioredis', ...CLIENT_LIBRARIES];

/** The header the default rule of these apps counts per: each test picks its clients. */
export const CLIENT_HEADER = 'x-client';

@Controller()
export class ItemsController {
  @Get('items')
  list() {
    return { ok: true };
  }

  /** The default rule plus a fixed-window one: two algorithms in one all-or-nothing call (the combined script). */
  @Get('pair')
  @RateLimit({ name: 'pair', limit: 1000, window: '1m', algorithm: 'fixed-window', key: `header:${CLIENT_HEADER}` })
  pair() {
    return { ok: true };
  }

  @Get('health')
  @SkipRateLimit()
  health() {
    return { ok: true };
  }
}

/** One HTTP answer, with when it was asked and how long it took (ms, `performance.now()`). */
export interface Answer {
  client: string;
  status: number;
  body: unknown;
  headers: Record<string, string>;
  startedAt: number;
  ms: number;
  /** Of `ms`, the time this process waited for a CPU (test/support/cpu-wait.ts): the machine's, not the code's. */
  cpuWaitMs: number;
}

export interface ResilientApp {
  app: INestApplication;
  keyPrefix: string;
  /** Every onDecision event, in order. */
  events: RateLimitDecisionEvent[];
  service: RateLimitService;
  /** The module's store: Redis behind the failure policy. */
  store: ResilientStore;
  redisStore: RedisStore;
  /** GET /items (or `path`) as `client` (the x-client header). */
  get(client: string, path?: string): Promise<Answer>;
  /** Store key of `client`'s default-rule state on GET /items (a sliding-log sorted set). */
  stateKey(client: string): string;
  /** Store key of the default rule's state for a key given to `RateLimitService` as is. */
  serviceStateKey(key: string): string;
  /** Decisions Redis made (not the failure policy) that admitted `client`: what Redis must have counted. */
  admittedOnRedis(client: string): number;
  /** Resolves once every command the app sent Redis before has run: Redis answers a connection's commands in order. */
  ping(): Promise<unknown>;
  /** Closes the app, then the client passed to it, if any. */
  close(): Promise<void>;
}

/**
 * An Express app whose default rule counts per x-client header, on `redis` behind the module's resilience
 * (failure policy, circuit breaker, block cache), through a client of `client` (see AppClient, and `settings` for
 * one passed in); `options` override any of it. The timeout is PATIENT_TIMEOUT_MS, so that a loaded machine does not
 * hand Redis's decisions to the failure policy: tests of timeouts set their own.
 */
export async function startResilientApp(redis: TestRedis, options: RateLimitModuleOptions = {}, client: AppClient = 'ioredis', settings: ClientSettings = {}): Promise<ResilientApp> {
  const passed = client === 'ioredis' ? undefined : await openLibraryClient(client, redis.port, settings);
  try {
    return await startAppOn(redis, passed, options);
  } catch (error) {
    await passed?.close();
    throw error;
  }
}

async function startAppOn(redis: TestRedis, passed: OpenClient | undefined, options: RateLimitModuleOptions): Promise<ResilientApp> {
  const events: RateLimitDecisionEvent[] = [];
  const keyPrefix = options.keyPrefix ?? uniquePrefix('res');
  const app = await startApp('express', {
    imports: [
      RateLimitModule.forRoot({
        store: passed?.client ?? `redis://127.0.0.1:${redis.port}`,
        globalGuard: true,
        keyPrefix,
        timeoutMs: PATIENT_TIMEOUT_MS,
        metrics: false,
        defaultRule: { limit: 1000, window: '1h', algorithm: 'sliding-log', key: `header:${CLIENT_HEADER}` },
        ...options,
        onDecision: (event) => {
          events.push(event);
          options.onDecision?.(event);
        },
      }),
    ],
    controllers: [ItemsController],
  });
  const service = app.get(RateLimitService);
  const store = app.get<ResilientStore>(RATE_LIMIT_STORE);
  if (!(store instanceof ResilientStore)) throw new Error('Expected the module to put Redis behind a ResilientStore');
  const server = app.getHttpServer();
  const redisStore = store.primary as RedisStore;
  const trackerKey = (client: string) => `ItemsController.list|header:${CLIENT_HEADER}:${client}`;
  return {
    app,
    keyPrefix,
    events,
    service,
    store,
    redisStore,
    async get(client, path = '/items') {
      const startedAt = performance.now();
      const waited = cpuWaitMs();
      const res = await request(server).get(path).set(CLIENT_HEADER, client);
      const ms = performance.now() - startedAt;
      return { client, status: res.status, body: res.body, headers: res.headers as Record<string, string>, startedAt, ms, cpuWaitMs: cpuWaitMs() - waited };
    },
    stateKey: (client) => ruleKeys(keyPrefix, service.rule('default'), trackerKey(client)).state,
    serviceStateKey: (key) => ruleKeys(keyPrefix, service.rule('default'), key).state,
    admittedOnRedis: (client) =>
      events.filter((e) => e.entries[0].key === trackerKey(client) && e.result.allowed && !e.result.decisions.some((d) => d.degraded)).length,
    ping: () => ping(redisStore.client as RedisClientLike),
    close: async () => {
      await app.close();
      await passed?.close();
    },
  };
}

/** PING through `client`, whatever its library: each has a `ping()` sent on its one connection, after what is queued. */
export const ping = (client: RedisClientLike): Promise<unknown> => (client as unknown as { ping(): Promise<unknown> }).ping();

/**
 * The clients of one library a suite builds its stores on: ioredis with its defaults (as `TestRedis.client()` makes
 * them), the others as `openClient` opens them. `closeAll()` in afterAll.
 */
export function suiteClients(library: AppClient): { open(port: number): Promise<RedisClientLike>; closeAll(): Promise<void> } {
  const opened: OpenClient[] = [];
  return {
    async open(port) {
      const next = library === 'ioredis' ? await openIoRedis(port) : await openLibraryClient(library, port);
      opened.push(next);
      return next.client;
    },
    async closeAll() {
      await Promise.all(opened.splice(0).map((c) => c.close()));
    },
  };
}

/** `openClient` (with `settings`), and GLIDE's logs kept to errors: these tests break Redis on purpose. */
function openLibraryClient(library: ClientLibrary, port: number, settings: ClientSettings = {}): Promise<OpenClient> {
  if (library === 'GLIDE') quietGlideLogs();
  return openClientWith(library, port, settings);
}

async function openIoRedis(port: number): Promise<OpenClient> {
  const client = new Redis({ host: '127.0.0.1', port });
  // Without a listener, ioredis prints the errors of a server the test stops.
  client.on('error', () => undefined);
  await client.ping();
  return { client, close: async () => void (await client.quit().catch(() => client.disconnect())) };
}

/** Requests from `workers` concurrent loops until stopped; each loop waits for its answer before the next. */
export class Traffic {
  readonly answers: Answer[] = [];
  private stopped = false;
  private readonly done: Promise<void>;

  constructor(send: () => Promise<Answer>, workers = 4) {
    this.done = Promise.all(
      Array.from({ length: workers }, async () => {
        while (!this.stopped) this.answers.push(await send());
      }),
    ).then(() => undefined);
  }

  async stop(): Promise<Answer[]> {
    this.stopped = true;
    await this.done;
    return this.answers;
  }
}

/** Polls `condition` until it holds; fails after `timeoutMs` (long: a passing wait ends when it holds), saying what was awaited. */
export async function waitFor(what: string, condition: () => boolean | Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!(await condition())) {
    if (performance.now() > deadline) throw new Error(`Timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** SIGKILLs the test's own redis-server; resolves once it has exited, with when it was signalled and when it had exited. */
export async function killRedis(redis: TestRedis): Promise<{ signalledAt: number; exitedAt: number }> {
  const child = redis.process!;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const signalledAt = performance.now();
  child.kill('SIGKILL');
  await exited;
  return { signalledAt, exitedAt: performance.now() };
}

/**
 * Collects unhandled rejections. Jest gives each test file a copy of `process` that the runtime never emits
 * on, so the listener goes on the real one (the main context's).
 */
export function watchUnhandledRejections(): { readonly seen: unknown[]; dispose(): void } {
  const real = runInThisContext('process') as NodeJS.Process;
  const seen: unknown[] = [];
  const listener = (reason: unknown) => seen.push(reason);
  real.on('unhandledRejection', listener);
  return { seen, dispose: () => real.off('unhandledRejection', listener) };
}

/**
 * A metric's value from a prom-client registry, summed over the samples matching `labels`; `sample` picks the
 * samples of one series of a histogram (e.g. `rate_limit_decision_duration_seconds_count`).
 */
export async function metricValue(registry: Registry, name: string, labels: Record<string, string> = {}, sample?: string): Promise<number> {
  const metric = registry.getSingleMetric(name);
  if (!metric) throw new Error(`No metric ${name}`);
  const { values } = await metric.get();
  return values
    .filter((v) => sample === undefined || (v as { metricName?: string }).metricName === sample)
    .filter((v) => Object.entries(labels).every(([k, want]) => String((v.labels as Record<string, unknown>)[k]) === want))
    .reduce((sum, v) => sum + v.value, 0);
}

/** The longest answer, less the time the process waited for a CPU meanwhile: what the code took, on a busy machine too. */
export const maxLatency = (answers: readonly Answer[]): number => Math.max(...answers.map((a) => a.ms - a.cpuWaitMs));

/** The answers still awaited at instant `t` or asked later: those a failure at `t` could delay. */
export const pendingAt = (answers: readonly Answer[], t: number): Answer[] => answers.filter((a) => a.startedAt + a.ms >= t);
