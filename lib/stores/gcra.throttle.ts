import { defineRule } from '../rules/define-rule.js';
import type { RateLimitRule } from '../interfaces/rule.interface.js';
import type { RateLimitStore } from '../interfaces/store.interface.js';

/** redis-cell's reply: limited (0/1), limit (max_burst + 1), remaining, retry after (s, -1 if allowed), reset after (s). */
export type ThrottleReply = [limited: 0 | 1, limit: number, remaining: number, retryAfterS: number, resetAfterS: number];

const rules = new Map<string, RateLimitRule>();
const seconds = (ms: number) => Math.ceil(ms / 1000);

/**
 * `CL.THROTTLE key max_burst count period [quantity]` on any store: `count` per `period` seconds, bursts of up to
 * `max_burst + 1`; quantity 0 only looks. A quantity above `max_burst + 1` is refused with retry after -1, as in
 * redis-cell. Times are rounded up to whole seconds, as redis-cell does.
 */
export async function throttle(store: RateLimitStore, key: string, maxBurst: number, count: number, period: number, quantity = 1): Promise<ThrottleReply> {
  const id = `${maxBurst}/${count}/${period}`;
  let rule = rules.get(id);
  if (!rule) {
    rule = defineRule({ algorithm: 'gcra', limit: count, window: period * 1000, burst: maxBurst + 1 }, 'throttle', 'throttle');
    if (rules.size > 1000) rules.clear();
    rules.set(id, rule);
  }
  if (quantity > rule.burst) {
    const now = await store.peek(key, rule, 0);
    return [1, rule.burst, now.remaining, -1, seconds(now.resetAfterMs)];
  }
  const d = quantity === 0 ? await store.peek(key, rule, 0) : await store.consume(key, rule, quantity);
  return [d.allowed ? 0 : 1, d.limit, d.remaining, d.allowed ? -1 : seconds(d.retryAfterMs), seconds(d.resetAfterMs)];
}
