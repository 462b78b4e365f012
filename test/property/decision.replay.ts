import type { Redis } from 'ioredis';
import { MemoryStore, RateLimitCostError, RedisStore, type RateLimitRule, type RateLimitStore } from '../../lib/index.js';
import { ManualClock } from '../support/manual.clock.js';
import { startRedis, uniquePrefix, type TestRedis } from '../support/redis-server.js';
import type { Gap, Step } from './decision.arbitraries.js';
import type { ModelDecision } from './reference-decisions.models.js';
import { ReferenceStore, type ModelEntry } from './reference-store.model.js';

export type DirectStoreKind = 'memory' | 'redis';
export const START = 1_700_000_000_000;

/** A fresh store (own clock, own key prefix) for every property run; the Redis server lives as long as the suite. */
export function useFreshStores(kind: DirectStoreKind): () => { store: RateLimitStore; clock: ManualClock } {
  let redis: TestRedis | undefined;
  let client: Redis | undefined;
  beforeAll(async () => {
    if (kind === 'redis') client = (redis = await startRedis()).client();
  });
  afterAll(async () => {
    await redis?.stop();
  });
  return () => {
    const clock = new ManualClock(START);
    const options = { clock: clock.now, keyPrefix: uniquePrefix('prop') };
    return { store: kind === 'memory' ? new MemoryStore(options) : new RedisStore(client!, options), clock };
  };
}

/**
 * With an injected clock, Redis still expires keys by its own clock: a key written with a TTL of a few ms can
 * vanish between two steps at the same injected instant. On Redis, a step that writes a key living less than this
 * is followed by a step at or after the key's end.
 */
export const REDIS_TTL_GUARD_MS = 1500;

/** The most one request can cost under a rule. */
const most = (rule: RateLimitRule) => (rule.algorithm === 'gcra' ? rule.burst : rule.limit);

function moved(t: number, gap: Gap, rule: RateLimitRule, last: ModelDecision | undefined): number {
  switch (gap.kind) {
    case 'ms':
      return t + gap.ms;
    case 'back':
      return t - gap.ms;
    case 'boundary': {
      const grid = rule.algorithm === 'sliding-window' ? rule.windowMs / rule.segments : rule.windowMs;
      return t + grid - (t % grid) + gap.offset;
    }
    case 'retry':
      return t + Math.max(0, (last?.retryAfterMs ?? 0) + gap.offset);
    case 'reset':
      return t + Math.max(0, (last?.resetAfterMs ?? 0) + gap.offset);
  }
}

/**
 * Runs the steps on the store and on the reference, expecting every decision field to match. A clock that steps
 * back never lands before the end of a key that had already ended at the latest instant seen: there, whether a
 * store still holds it (the memory store drops an ended key when it meets it; Redis by its own clock) is not a
 * decision the model can make, and no store promises it.
 */
export async function replay(store: RateLimitStore, clock: ManualClock, rules: RateLimitRule[], steps: Step[], guardMs: number): Promise<void> {
  const model = new ReferenceStore();
  let t = START;
  let latest = t;
  let notBefore = -Infinity;
  let last: ModelDecision | undefined;
  for (const [index, step] of steps.entries()) {
    const rule = rules[step.rule];
    t = Math.max(moved(t, step.gap, rule, last), notBefore);
    if (t < latest) t = Math.max(t, ...[...model.expiries().values()].filter((end) => end <= latest));
    latest = Math.max(latest, t);
    clock.set(t);
    const before = model.expiries();
    const key = `t${step.tracker}`;
    const at = { step: index, atMs: t - START, action: step.action, rule: rule.name, key };
    switch (step.action) {
      case 'consume': {
        const cost = 1 + (step.cost % most(rule));
        last = model.consume(t, key, rule, cost);
        expect({ ...at, cost, decision: await store.consume(key, rule, cost) }).toEqual({ ...at, cost, decision: last });
        break;
      }
      case 'peek': {
        const cost = step.cost % (most(rule) + 1);
        last = model.peek(t, key, rule, cost);
        expect({ ...at, cost, decision: await store.peek(key, rule, cost) }).toEqual({ ...at, cost, decision: last });
        break;
      }
      case 'refund': {
        const cost = 1 + (step.cost % most(rule));
        model.refund(t, key, rule, cost);
        await store.refund(key, rule, cost);
        break;
      }
      case 'reset':
        model.reset(key, rule);
        await store.reset(key, rule);
        break;
      case 'consumeAll': {
        const entries: ModelEntry[] = step.entries.map((e) => {
          const r = rules[e.rule];
          return { key: `t${e.tracker}`, rule: r, ...(e.cost === undefined ? {} : { cost: 1 + (e.cost % most(r)) }) };
        });
        const cost = 1 + (step.cost % Math.min(...entries.map((e) => most(e.rule))));
        const summed = new Map<string, number>();
        for (const e of entries) summed.set(`${e.rule.name}/${e.key}`, (summed.get(`${e.rule.name}/${e.key}`) ?? 0) + (e.cost ?? cost));
        if (entries.some((e) => summed.get(`${e.rule.name}/${e.key}`)! > most(e.rule))) {
          await expect(store.consumeAll(entries, cost)).rejects.toThrow(RateLimitCostError);
          break;
        }
        const want = model.consumeAll(t, entries, cost);
        last = want.decisions.find((d) => !d.allowed) ?? want.decisions[0];
        const entriesAt = entries.map((e) => `${e.rule.name}/${e.key}x${e.cost ?? cost}`);
        expect({ ...at, entriesAt, result: await store.consumeAll(entries, cost) }).toEqual({ ...at, entriesAt, result: want });
        break;
      }
    }
    for (const [id, end] of model.expiries()) {
      if (before.get(id) !== end && end > t && end - t < guardMs) notBefore = Math.max(notBefore, end);
    }
  }
}
