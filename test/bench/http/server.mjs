// The Nest app under load in the HTTP bench: Express or Fastify (config.adapter), one route `GET /ping` answering "ok", and one of five
// guards (none, a guard that only returns true, a guard that only awaits a Redis PING, our RateLimitGuard with a given algorithm and
// optionally a local budget, @nestjs/throttler + @nest-lab/throttler-storage-redis).
// Plain ESM: decorators are applied by hand (Controller()(cls), Get()(proto, name, descriptor), Module()(cls)).
//
// Used two ways:
// - as a child process (the bench's default): `node test/bench/http/server.mjs` with the case in the env var
//   BENCH_HTTP_CASE (JSON); it listens on 127.0.0.1:<free port>, sends { type: 'listening', port } over IPC,
//   answers { type: 'reset-stats' }, { type: 'stats' } (our guard's decision counters) and { type: 'cpu' }
//   (process.cpuUsage()), and closes the app and
//   exits on { type: 'stop' } (a clean exit, so --cpu-prof writes its profile);
// - in-process, through `startBenchApp(config)` (BENCH_HTTP_INPROCESS=1), to compare the two set-ups.
import { Controller, Get, Module } from '@nestjs/common';
import { APP_GUARD, APP_INTERCEPTOR, NestFactory } from '@nestjs/core';
import { ExpressAdapter } from '@nestjs/platform-express';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { ThrottlerGuard, ThrottlerModule } from '@nestjs/throttler';
import { ThrottlerStorageRedisService } from '@nest-lab/throttler-storage-redis';
import { Redis } from 'ioredis';
import { RateLimitModule, defineRule } from '../../../dist/index.js';

/** Limit high enough that no request of a run is refused: the bench measures the cost of admitting. */
export const HUGE_LIMIT = 1e9;

class PingController {
  ping() {
    return 'ok';
  }
}
Controller()(PingController);
Get('ping')(PingController.prototype, 'ping', Object.getOwnPropertyDescriptor(PingController.prototype, 'ping'));

/** A global guard that admits every request and does nothing else: what Nest charges for running any guard. */
class AdmitAllGuard {
  canActivate() {
    return true;
  }
}

/**
 * A global guard that admits every request once Redis has answered one PING (on an auto-pipelined client): the floor
 * under any guard that asks Redis. The no-guard app is not such a floor on Express: an app that waits on Redis
 * answers requests in bunches, and Express then spent 30 µs less app CPU per request on this bench's machine.
 */
class AwaitRedisGuard {
  constructor(redis) {
    this.redis = redis;
  }

  canActivate() {
    return this.redis.ping().then(() => true);
  }
}

/** A global interceptor that only passes the handler's result on: what Nest charges for running any interceptor. */
class PassOnInterceptor {
  intercept(_context, next) {
    return next.handle();
  }
}

/**
 * Our default rule in a case: a limit nobody reaches, with the case's algorithm, and `localBudget` when the case
 * leases (a rule option of later builds: the bench asks localBudgetAvailable() before starting such a case).
 */
export function oursRule(config) {
  return { limit: HUGE_LIMIT, window: '1m', algorithm: config.algorithm, ...(config.localBudget === undefined ? {} : { localBudget: config.localBudget }) };
}

/**
 * Whether this build's rules accept the `localBudget` of a case's config (another change adds the option):
 * defineRule refuses unknown fields, so a throwaway validation of the very rule the case uses says. True or false.
 */
export function localBudgetAvailable(config) {
  try {
    defineRule(oursRule(config), 'default');
    return true;
  } catch {
    return false;
  }
}

/**
 * The imports and providers of one case. `redis` is an ioredis client made the same way for both limiters
 * (default options: auto-pipelining off), passed in, so neither module owns or tunes its connection.
 */
function guardModule(config, redis) {
  switch (config.guard) {
    case 'none':
      return { imports: [], providers: [] };
    case 'admit-all':
      return {
        imports: [],
        providers: [
          { provide: APP_GUARD, useClass: AdmitAllGuard },
          ...(config.interceptor ? [{ provide: APP_INTERCEPTOR, useClass: PassOnInterceptor }] : []),
        ],
      };
    case 'await-redis':
      return { imports: [], providers: [{ provide: APP_GUARD, useValue: new AwaitRedisGuard(redis) }] };
    case 'ours':
      return {
        imports: [
          RateLimitModule.forRoot({
            store: redis,
            globalGuard: true,
            defaultRule: oursRule(config),
            ...(config.headers === undefined ? {} : { headers: config.headers }),
            ...(config.timeoutMs === undefined ? {} : { timeoutMs: config.timeoutMs }),
          }),
        ],
        providers: [],
      };
    case 'throttler':
      return {
        imports: [
          ThrottlerModule.forRoot({
            throttlers: [{ ttl: 60_000, limit: HUGE_LIMIT }],
            storage: new ThrottlerStorageRedisService(redis),
          }),
        ],
        providers: [{ provide: APP_GUARD, useClass: ThrottlerGuard }],
      };
    default:
      throw new Error(`unknown guard ${JSON.stringify(config.guard)}`);
  }
}

/** prom-client's global registry, where our module reports its metrics (when prom-client is installed). */
async function metricsRegistry() {
  try {
    const prom = await import('prom-client');
    return (prom.default ?? prom).register;
  } catch {
    return null;
  }
}

/**
 * Our guard's own account of its decisions since the last reset, from its Prometheus metrics: how many the
 * store made (allowed / rejected) and how many the failure policy made because Redis was slow or the circuit
 * open ("degraded": then the request was not decided in Redis at all). Zeros for the other guards.
 */
async function decisionStats(registry) {
  const stats = { allowed: 0, rejected: 0, degraded: 0, storeErrors: 0 };
  if (!registry) return stats;
  for (const metric of await registry.getMetricsAsJSON()) {
    if (metric.name === 'rate_limit_decisions_total') for (const v of metric.values) stats[v.labels.result] = (stats[v.labels.result] ?? 0) + v.value;
    if (metric.name === 'rate_limit_store_errors_total') for (const v of metric.values) stats.storeErrors += v.value;
  }
  return stats;
}

/**
 * Builds and starts the app of one case on 127.0.0.1:0. config: { adapter: 'express' | 'fastify', guard: 'none'|'admit-all'|'await-redis'|'ours'|'throttler', interceptor? (admit-all), algorithm?,
 * localBudget?, headers?, timeoutMs? (ours), autoPipelining? (the ioredis client's, default off), trustProxy: boolean, redisPort }. Returns { port, close() }.
 */
export async function startBenchApp(config) {
  const redis =
    config.guard === 'none' || config.guard === 'admit-all' ? null : new Redis({ host: '127.0.0.1', port: config.redisPort, enableAutoPipelining: config.autoPipelining === true });
  if (redis) await redis.ping(); // connected before the first request
  const { imports, providers } = guardModule(config, redis);
  class BenchAppModule {}
  Module({ imports, controllers: [PingController], providers })(BenchAppModule);

  // With trust proxy on, req.ip (Express) / request.ip (Fastify) is the X-Forwarded-For address, or the socket's
  // when a request has none: both guards key on it.
  const adapter = config.adapter === 'fastify' ? new FastifyAdapter({ trustProxy: config.trustProxy === true }) : new ExpressAdapter();
  const app = await NestFactory.create(BenchAppModule, adapter, { logger: ['error'] });
  if (config.adapter !== 'fastify' && config.trustProxy) app.getHttpAdapter().getInstance().set('trust proxy', true);
  await app.listen(0, '127.0.0.1');
  const { port } = app.getHttpServer().address();
  const registry = await metricsRegistry();
  return {
    port,
    /** Zeroes the decision counters (after the warm-up). */
    resetStats: () => registry?.resetMetrics(),
    stats: () => decisionStats(registry),
    async close() {
      await app.close();
      if (redis) await redis.quit().catch(() => redis.disconnect());
    },
  };
}

async function runAsChild() {
  const config = JSON.parse(process.env.BENCH_HTTP_CASE);
  const server = await startBenchApp(config);
  process.on('message', async (message) => {
    switch (message?.type) {
      case 'reset-stats':
        server.resetStats();
        process.send({ type: 'reset-stats' });
        break;
      case 'stats':
        process.send({ type: 'stats', stats: await server.stats() });
        break;
      case 'cpu':
        // The app's own account of its CPU (user + system µs), read inside the process that spent it.
        process.send({ type: 'cpu', usage: process.cpuUsage() });
        break;
      case 'stop':
        await server.close();
        process.disconnect?.();
        process.exit(0);
    }
  });
  // The bench died without saying stop: don't linger.
  process.on('disconnect', () => process.exit(0));
  process.send({ type: 'listening', port: server.port, pid: process.pid });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  runAsChild().catch((error) => {
    process.stderr.write(`bench app failed to start: ${error?.stack ?? error}\n`);
    process.exit(1);
  });
}
