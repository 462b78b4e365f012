import type { Clock } from '../interfaces/clock.interface.js';
import type { MultiDecision } from '../interfaces/decision.interface.js';

/**
 * Remembers refusals in-process: a request refused with `retryAfterMs = T` is refused again, without a store
 * call, until T has passed, since nothing but a refund or reset could make it pass sooner (this process's
 * refunds and resets clear the entry; another process's are not seen until T). Bounded; oldest entries go first.
 */
export class LocalBlockCache {
  private readonly entries = new Map<string, { until: number; at: number; result: MultiDecision }>();
  private hitCount = 0;
  private generationCount = 0;

  constructor(
    private readonly maxKeys = 10_000,
    private readonly clock: Clock = () => performance.now(),
  ) {}

  /** Refusals answered from the cache so far. */
  get hits(): number {
    return this.hitCount;
  }

  /**
   * Bumped by every `forget` and `clear`: a refusal decided before a bump (its reply still in flight) must not be
   * recorded after it, since what was forgotten may be what made it a refusal.
   */
  get generation(): number {
    return this.generationCount;
  }

  get size(): number {
    return this.entries.size;
  }

  /** The cached refusal for this request signature, with its waits brought up to date; undefined when none. */
  get(signature: string): MultiDecision | undefined {
    const entry = this.entries.get(signature);
    if (!entry) return undefined;
    const now = this.clock();
    if (now >= entry.until) {
      this.entries.delete(signature);
      return undefined;
    }
    this.hitCount++;
    const elapsed = now - entry.at;
    return {
      allowed: false,
      decisions: entry.result.decisions.map((d) => ({
        ...d,
        resetAfterMs: Math.max(0, Math.ceil(d.resetAfterMs - elapsed)),
        retryAfterMs: d.allowed ? 0 : Math.max(1, Math.ceil(d.retryAfterMs - elapsed)),
      })),
    };
  }

  /** Records a refusal; `retryAfterMs` is the wait the store reported. */
  set(signature: string, result: MultiDecision, retryAfterMs: number): void {
    if (result.allowed || retryAfterMs <= 0) return;
    const now = this.clock();
    this.entries.delete(signature);
    this.entries.set(signature, { until: now + retryAfterMs, at: now, result });
    if (this.entries.size > this.maxKeys) this.entries.delete(this.entries.keys().next().value!);
  }

  /** Forgets every cached refusal involving this rule and key (after a refund or a reset). */
  forget(ruleName: string, key: string): void {
    this.generationCount++;
    const part = `${ruleName}\u0000${key}\u0000`;
    for (const signature of this.entries.keys()) {
      if (signature.startsWith(part) || signature.includes(`\u0001${part}`)) this.entries.delete(signature);
    }
  }

  clear(): void {
    this.generationCount++;
    this.entries.clear();
  }

  /** The cache key of a request: every rule, tracker and cost it involves. */
  static signature(entries: readonly { key: string; rule: { name: string }; cost?: number }[], cost = 1): string {
    let signature = '';
    for (const e of entries) signature += `${e.rule.name}\u0000${e.key}\u0000${e.cost ?? cost}\u0001`;
    return signature;
  }
}
