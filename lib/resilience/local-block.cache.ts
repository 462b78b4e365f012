import type { Clock } from '../interfaces/clock.interface.js';
import type { MultiDecision } from '../interfaces/decision.interface.js';
import type { RateLimitRule } from '../interfaces/rule.interface.js';
import { textDigest } from '../keys/text.digest.js';

/** Keys up to this many UTF-16 code units are kept as they are in a signature; longer ones by their digest. */
const MAX_RAW_KEY = 128;
// The signature's separators, and the '#' of a digest: a key holding one is hashed, so it cannot pass for another request.
const SIGNATURE_SYNTAX = /[\u0000\u0001]|^#/;
/** Estimated heap of one entry besides its signature: the Map slot, the entry and the MultiDecision objects. */
const ENTRY_OVERHEAD_BYTES = 240;
/** Estimated heap of one Decision in an entry. */
const DECISION_BYTES = 160;

export const DEFAULT_BLOCK_CACHE_KEYS = 10_000;
export const DEFAULT_BLOCK_CACHE_BYTES = 4 * 1024 * 1024;

interface Entry {
  until: number;
  at: number;
  result: MultiDecision;
  bytes: number;
}

/**
 * Remembers refusals in-process: a request refused with `retryAfterMs = T` is refused again, without a store
 * call, until T has passed, since nothing but a refund or reset could make it pass sooner (this process's
 * refunds and resets clear the entry; another process's are not seen until T). Bounded in entries and in
 * estimated bytes (long keys are kept as digests); oldest entries go first.
 */
export class LocalBlockCache {
  private readonly entries = new Map<string, Entry>();
  private hitCount = 0;
  private byteCount = 0;
  private generationCount = 0;
  /** Where eviction stopped: every entry before it is gone, so the next one it yields is the oldest. */
  private oldest?: MapIterator<[string, Entry]>;

  constructor(
    private readonly maxKeys = DEFAULT_BLOCK_CACHE_KEYS,
    private readonly clock: Clock = () => performance.now(),
    private readonly maxBytes = DEFAULT_BLOCK_CACHE_BYTES,
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

  /** Estimated heap the cached refusals take, in bytes (signatures at 2 bytes a code unit, plus fixed overheads). */
  get bytes(): number {
    return this.byteCount;
  }

  /** The cached refusal for this request signature, with its waits brought up to date; undefined when none. */
  get(signature: string): MultiDecision | undefined {
    const entry = this.entries.get(signature);
    if (!entry) return undefined;
    const now = this.clock();
    if (now >= entry.until) {
      this.delete(signature, entry);
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
    const bytes = signature.length * 2 + ENTRY_OVERHEAD_BYTES + result.decisions.length * DECISION_BYTES;
    const previous = this.entries.get(signature);
    if (previous) this.delete(signature, previous);
    // Only a request of very many rules could be this big; not caching it just costs a store call.
    if (bytes > this.maxBytes) return;
    const now = this.clock();
    this.entries.set(signature, { until: now + retryAfterMs, at: now, result, bytes });
    this.byteCount += bytes;
    while (this.entries.size > this.maxKeys || this.byteCount > this.maxBytes) {
      // One iterator kept from eviction to eviction: a fresh walk from the start would step over every entry deleted
      // since the Map last compacted, O(maxKeys) per refusal once the cache is full.
      let next = this.oldest?.next();
      if (next === undefined || next.done) next = (this.oldest = this.entries.entries()).next();
      if (next.done) break;
      this.delete(next.value[0], next.value[1]);
    }
  }

  /** Forgets every cached refusal involving this rule and key (after a refund or a reset). */
  forget(ruleName: string, key: string): void {
    this.generationCount++;
    const part = `${ruleName}\u0000${signatureKey(key)}\u0000`;
    for (const [signature, entry] of this.entries) {
      if (signature.startsWith(part) || signature.includes(`\u0001${part}`)) this.delete(signature, entry);
    }
  }

  clear(): void {
    this.generationCount++;
    this.entries.clear();
    this.oldest = undefined;
    this.byteCount = 0;
  }

  /**
   * The cache key of a request: every rule, tracker and cost it involves, and each rule's values (limit, window,
   * algorithm parameters, lockout), which may be resolved per request: a refusal under the free plan's limit must
   * not answer the same client once a plan resolves another.
   */
  static signature(entries: readonly { key: string; rule: RateLimitRule; cost?: number }[], cost = 1): string {
    let signature = '';
    for (const e of entries) signature += `${e.rule.name}\u0000${signatureKey(e.key)}\u0000${e.cost ?? cost}\u0000${ruleValues(e.rule)}\u0001`;
    return signature;
  }

  private delete(signature: string, entry: Entry): void {
    this.entries.delete(signature);
    this.byteCount -= entry.bytes;
  }
}

/**
 * What a rule decides with, as text: built once per rule object (rules are immutable; a request-dependent rule keeps
 * one per resolved tuple), so that a signature costs a WeakMap look-up per rule, not a string built per request.
 */
function ruleValues(rule: RateLimitRule): string {
  let values = RULE_VALUES.get(rule);
  if (values === undefined) {
    const lockout = rule.lockoutFactor === undefined ? '' : `,${rule.lockoutFactor},${rule.lockoutMaxMs},${rule.lockoutForgetMs}`;
    values = `${rule.algorithm},${rule.limit},${rule.windowMs},${rule.segments},${rule.refill},${rule.burst},${rule.blockMs}${lockout}${rule.lockoutRestartsCount ? ',r' : ''}`;
    RULE_VALUES.set(rule, values);
  }
  return values;
}
const RULE_VALUES = new WeakMap<RateLimitRule, string>();

/** A key as a signature holds it: as is when short and free of the signature's syntax, else `#` + its digest. */
function signatureKey(key: string): string {
  return key.length <= MAX_RAW_KEY && !SIGNATURE_SYNTAX.test(key) ? key : `#${textDigest(key)}`;
}
