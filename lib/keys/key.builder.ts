import { ALGORITHM_DEFINITIONS } from '../algorithms/algorithm.registry.js';
import type { RateLimitRule, WindowAlgorithm } from '../interfaces/rule.interface.js';
import { textDigest } from './text.digest.js';

const MAX_RAW_TRACKER = 64;
// Printable ASCII without the hash-tag braces and without '#', which marks a hashed tracker.
const SAFE_TRACKER = /^[\x21-\x22\x24-\x7a\x7c\x7e]*$/;

/**
 * The tracker as it appears inside the key's hash tag: as is when short and plain, else `#` + a SHA-256 digest,
 * so keys stay bounded and a tracker cannot choose its own cluster slot with `{` or `}`. The digest is of what
 * was sent: trackers that differ only in lone surrogates get different keys.
 */
export function trackerSegment(tracker: string): string {
  if (tracker.length > 0 && tracker.length <= MAX_RAW_TRACKER && SAFE_TRACKER.test(tracker)) return tracker;
  return '#' + textDigest(tracker).slice(0, 32);
}

/** The keys one rule writes for one tracker; all carry the tracker's hash tag, so they share a slot. */
export interface RuleKeys {
  state: string;
  block: string;
  /** Only for a rule with `overrides: true`: its override for the tracker (see `overrideKey`). */
  override?: string;
}

/**
 * State: `<prefix>:<rule>:<tag>:{<tracker>}`, the tag naming the algorithm and the parameters that give the
 * stored state its meaning (`sw100`, `fw1h`, `tb6m`, see AlgorithmDefinition.stateTag): a live change of them, or of
 * the algorithm, starts afresh instead of misreading the old state. Lockout: `<prefix>:<rule>:{<tracker>}:block`,
 * the same whatever the algorithm or its shape, so that changing them does not end a lockout.
 */
export function ruleKeys(prefix: string, rule: RateLimitRule, tracker: string): RuleKeys {
  const heads = keyHeads(prefix, rule);
  const tail = `{${trackerSegment(tracker)}}`;
  if (rule.overrides) return { state: heads.state + tail, block: `${heads.block}${tail}:block`, override: `${heads.block}${tail}:override` };
  return { state: heads.state + tail, block: `${heads.block}${tail}:block` };
}

/**
 * A rule's override for one tracker: `<prefix>:<rule>:{<tracker>}:override`, beside its lockout key (same slot as
 * its state), named by the rule's name alone: a live change of the rule's limit or algorithm keeps the override.
 */
export function overrideKey(prefix: string, ruleName: string, tracker: string): string {
  return `${prefix}:${ruleName}:{${trackerSegment(tracker)}}:override`;
}

/** The index of a prefix's overrides, for listing them: a sorted set of overrides by expiry (see RedisOverrideStore). */
export function overrideIndexKey(prefix: string): string {
  return `${prefix}:overrides`;
}

/** What a rule's keys start with, before the tracker: built once per rule (and prefix), not per decision. */
interface KeyHeads {
  prefix: string;
  state: string;
  block: string;
}
const HEADS = new WeakMap<RateLimitRule, KeyHeads>();

function keyHeads(prefix: string, rule: RateLimitRule): KeyHeads {
  let heads = HEADS.get(rule);
  if (heads?.prefix !== prefix) {
    const block = `${prefix}:${rule.name}:`;
    heads = { prefix, block, state: `${block}${ALGORITHM_DEFINITIONS[rule.algorithm as WindowAlgorithm].stateTag(rule)}:` };
    HEADS.set(rule, heads);
  }
  return heads;
}

/** Trackers up to this many UTF-16 code units are the memory store's keys as they are; longer ones, their digest. */
const MAX_RAW_MEMORY_TRACKER = 256;

/**
 * The tracker as the memory store keys it within one rule's keys: as is (the caller's string, whose hash V8 keeps,
 * so nothing is built or hashed again) unless long or starting with `#`, else `#` + its digest, as in
 * `trackerSegment`. Two trackers get one key only if their digests collide, as in Redis; memory stays bounded.
 */
export function memoryTrackerKey(tracker: string): string {
  if (tracker.length <= MAX_RAW_MEMORY_TRACKER && tracker.charCodeAt(0) !== HASHED_MARK) return tracker;
  return '#' + textDigest(tracker).slice(0, 32);
}
const HASHED_MARK = 0x23; // '#'

/**
 * The sorted set of a concurrency rule's leases for one tracker: `<prefix>:<rule>:cc:{<tracker>}`, lease ids
 * scored by their expiry. It carries the tracker's hash tag like the rule keys, and its own `cc` tag, so that a
 * rule turned from a window algorithm into a concurrency one never reads the other's state.
 */
export function leaseKey(prefix: string, rule: RateLimitRule, tracker: string): string {
  return `${prefix}:${rule.name}:cc:{${trackerSegment(tracker)}}`;
}
