// What the store bench calls: each subject is built fresh for every run and returns `call(key)`, resolving to
// true / false (admitted or not) or { allowed, degraded }. Ours always goes through the module as an app uses
// it: a RateLimitService from a Nest application context of RateLimitModule.forRoot (the module builds the
// client, or takes the one passed, the RedisStore and the ResilientStore around it, metrics on a registry of the
// bench's own), and `decide()`, the guard's path. The peers run as their READMEs show them.
import { NestFactory } from '@nestjs/core';
import { Redis } from 'ioredis';
import promClient from 'prom-client';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { MemoryStore, RateLimitModule, RateLimitService, defineRule } from '../../../dist/index.js';

const WINDOW_MS = 60_000;

/** rate-limiter-flexible rejects with a RateLimiterRes when the limit is exceeded: a refusal, not an error. */
function deniedOrRethrow(error) {
  if (error instanceof RateLimiterRes) return false;
  throw error;
}

/**
 * Whether the built module accepts `coalesce` (another change adds it): the options validator refuses unknown
 * option names, so a throwaway validation says. Resolves to true or false.
 */
export async function coalesceAvailable() {
  try {
    const { validateModuleOptions } = await import('../../../dist/config/module-options.validator.js');
    validateModuleOptions({ coalesce: false });
    return true;
  } catch {
    return false;
  }
}

export const ruleFor = (algorithm, limit) => defineRule({ algorithm, limit, window: WINDOW_MS }, 'bench');

/**
 * Our module in an application context: `store` as forRoot takes it (a redis:// URL, { cluster }, 'memory', or a
 * client of any library, which the caller closes).
 * `coalesce: false` turns coalescing off; true or undefined leave the module's default (on, { maxBatch: 64 }).
 * `functions: false` keeps the scripts to EVALSHA (the module's default: a function library, FCALL).
 * Metrics go to a registry of this run.
 */
export async function moduleSubject({ store, algorithm, limit, coalesce, functions }) {
  const rule = ruleFor(algorithm, limit);
  const registry = new promClient.Registry();
  const options = { store, metrics: { registry }, ...(coalesce === false ? { coalesce: false } : {}), ...(functions === false ? { functions: false } : {}) };
  const app = await NestFactory.createApplicationContext(RateLimitModule.forRoot(options), { logger: ['error'] });
  const service = app.get(RateLimitService);
  // A promise chain, as the peers' subjects are: an async wrapper would add a promise and a turn of its own.
  return { call: (key) => service.decide([{ key, rule }]).then(outcome), close: () => app.close() };
}

/** The load's outcome of a decision: true or false, or { allowed, degraded } when the failure policy decided. */
function outcome(result) {
  for (let i = 0; i < result.decisions.length; i++) if (result.decisions[i].degraded) return { allowed: result.allowed, degraded: true };
  return result.allowed;
}

const allowedOf = (decision) => decision.allowed;

/** The bare MemoryStore's consume, no module around it. */
export function bareMemorySubject({ algorithm, limit, maxKeys }) {
  const store = new MemoryStore(maxKeys === undefined ? {} : { maxKeys });
  const rule = ruleFor(algorithm, limit);
  return { call: (key) => store.consume(key, rule).then(allowedOf), close: async () => {} };
}

/**
 * Not a limiter: the least a fixed window in memory can do per call, as the prototype did it. A Map from key to
 * { count, window end } on Date.now(), an async function returning a fresh object: no eviction (every key is kept),
 * a ms clock that may step back, no validation. It shows what this harness allows a memory store per decision, as the
 * raw EVALSHA `return 1` shows it for one script call per decision on Redis.
 */
export function minimalMemorySubject({ limit }) {
  const counts = new Map();
  const consume = async (key) => {
    const now = Date.now();
    let entry = counts.get(key);
    if (entry === undefined || entry.end <= now) {
      entry = { count: 0, end: now - (now % WINDOW_MS) + WINDOW_MS };
      counts.set(key, entry);
    }
    if (entry.count < limit) {
      entry.count++;
      return { allowed: true, remaining: limit - entry.count, resetAfterMs: entry.end - now };
    }
    return { allowed: false, remaining: 0, resetAfterMs: entry.end - now };
  };
  return { call: (key) => consume(key).then(allowedOf), close: async () => {} };
}

export function rlfMemorySubject({ limit }) {
  const limiter = new RateLimiterMemory({ points: limit, duration: WINDOW_MS / 1000 });
  return { call: (key) => limiter.consume(key).then(() => true, deniedOrRethrow), close: async () => {} };
}

/** A fresh ioredis client for a peer, connected before the clock starts. */
async function peerClient(port, autopipeline) {
  const client = new Redis({ host: '127.0.0.1', port, enableAutoPipelining: autopipeline });
  await client.ping();
  return client;
}

const quit = (client) => client.quit().catch(() => client.disconnect());

/**
 * An RLF limiter, `makeLimiter(client, options)`, on a client of its own (`opened`: { client, close() }, closed with
 * the subject).
 */
export function rlfSubject({ opened, makeLimiter, limit, prefix }) {
  const limiter = makeLimiter(opened.client, { points: limit, duration: WINDOW_MS / 1000, keyPrefix: prefix });
  return { call: (key) => limiter.consume(key).then(() => true, deniedOrRethrow), close: opened.close };
}

/** RateLimiterRedis on its own ioredis client. */
export async function rlfRedisSubject({ port, autopipeline, limit, prefix }) {
  const client = await peerClient(port, autopipeline);
  const makeLimiter = (storeClient, options) => new RateLimiterRedis({ storeClient, ...options });
  return rlfSubject({ opened: { client, close: () => quit(client) }, makeLimiter, limit, prefix });
}

/** EVALSHA of `return 1` (ioredis defineCommand): what one call per decision costs at best on this client. */
export async function noopSubject({ port, autopipeline }) {
  const client = await peerClient(port, autopipeline);
  client.defineCommand('noop', { numberOfKeys: 1, lua: 'return 1' });
  return { call: async (key) => (await client.noop(key)) === 1, close: () => quit(client) };
}
