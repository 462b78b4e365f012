import { ALGORITHM_DEFINITIONS } from '../algorithms/algorithm.registry.js';
import type { RateLimitRule } from '../interfaces/rule.interface.js';
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

/** The keys one rule writes for one tracker; both carry the tracker's hash tag, so they share a slot. */
export interface RuleKeys {
  state: string;
  block: string;
}

/**
 * `<prefix>:<rule>:<algorithm>:{<tracker>}` — the algorithm is part of the key so that changing a rule's algorithm
 * at run time starts afresh instead of reading another algorithm's data.
 */
export function ruleKeys(prefix: string, rule: RateLimitRule, tracker: string): RuleKeys {
  const state = `${prefix}:${rule.name}:${ALGORITHM_DEFINITIONS[rule.algorithm].tag}:{${trackerSegment(tracker)}}`;
  return { state, block: `${state}:block` };
}
