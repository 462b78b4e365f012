import type { MemoryEntry } from '../algorithms/algorithm.interface.js';

/** What a key holds, as far as eviction cares: rule state, or a lockout (which is the costliest to forget). */
export type KeyKind = 'state' | 'lockout';

// The lists a key can be on, in the order they give up their oldest key when the table is full.
/** Written once since it appeared: a flood of made-up trackers lands here and churns among itself. */
const PROBATION = 0;
/** Written again (charged a second time, refused, peeked or refunded): a count someone would gain by its loss. */
const PROTECTED = 1;
/** Lockouts, from the moment they are written. */
const LOCKOUT = 2;
const DETACHED = -1;
/** Probation gives up its oldest first while it holds more than `probationFloor` keys; else it goes last. */
const PROBATION_FIRST = [PROBATION, PROTECTED, LOCKOUT] as const;
const PROBATION_LAST = [PROTECTED, LOCKOUT, PROBATION] as const;

/** Old-end entries checked for expiry per list: on every eviction, and every SWEEP_EVERY writes. */
const EXPIRED_PER_EVICTION = 4;
const EXPIRED_PER_SWEEP = 64;
const SWEEP_EVERY = 32;

/**
 * An entry and its place in its list. The algorithms see only `value` and `expiresAt`; the links are intrusive, so
 * moving a key to the young end is a few pointer writes, with no Map delete and insert (which leave holes that
 * every later walk of the Map pays for).
 */
class KeyNode implements MemoryEntry<unknown> {
  value: unknown = undefined;
  expiresAt = 0;
  /** Toward the young end (the list's sentinel from the youngest). */
  younger: KeyNode = this;
  /** Toward the old end (the list's sentinel from the oldest). */
  older: KeyNode = this;
  /** The list it is on, or DETACHED when it is not stored (never written, dropped, or cleared). */
  list = DETACHED;
  constructor(readonly key: string) {}
}

/**
 * The memory store's keys, bounded at `maxKeys` with an eviction that costs O(1) per write however many keys there
 * are. Three lists (a segmented LRU): when the table is full, expired keys found at the old end of any list go
 * first; then the oldest key seen only once (probation); then the least recently written count (protected); and
 * lockouts last. So a flood of distinct trackers only displaces other keys seen once, while counts and lockouts
 * stay as long as there are at most `maxKeys - probationFloor` of them. Probation always keeps room for the
 * newest `probationFloor` keys, so a new tracker is still counted when the other lists fill the table.
 */
export class MemoryKeyTable {
  private readonly map = new Map<string, KeyNode>();
  /** One sentinel per list: `sentinel.older` is the youngest key, `sentinel.younger` the oldest. */
  private readonly lists = [new KeyNode(''), new KeyNode(''), new KeyNode('')];
  private readonly counts = [0, 0, 0];
  /** Keys seen once that the other lists cannot push out. */
  readonly probationFloor: number;
  private writes = 0;

  constructor(readonly maxKeys: number) {
    this.probationFloor = Math.max(1, Math.floor(maxKeys / 8));
  }

  get size(): number {
    return this.map.size;
  }

  /** The live entry for a key, or a new empty one (not stored until `set`) when it is missing or expired. */
  get(key: string, now: number): MemoryEntry<unknown> {
    const node = this.map.get(key);
    if (node === undefined) return new KeyNode(key);
    if (node.expiresAt > now) return node;
    // Expired: dropped, and the node reused as the empty entry.
    this.remove(node);
    node.value = undefined;
    node.expiresAt = 0;
    return node;
  }

  /**
   * Stores an entry (one returned by `get`, or any other object, whose fields are then copied), or drops the key
   * if the entry holds nothing. A key already stored moves to the young end of its list, from probation to
   * protected; a new one starts on probation, or on the lockout list.
   */
  set(key: string, entry: MemoryEntry<unknown>, now: number, kind: KeyKind = 'state'): void {
    // A node `get` returned that is still stored needs no lookup; anything else (a fresh node, a literal, a node
    // dropped since it was read) is matched to its key here.
    const node = entry instanceof KeyNode && entry.list !== DETACHED && entry.key === key ? entry : this.map.get(key);
    if (node === undefined) {
      if (entry.value !== undefined) this.insert(key, entry, now, kind);
    } else {
      if (node !== entry) {
        node.value = entry.value;
        node.expiresAt = entry.expiresAt;
      }
      if (node.value === undefined) this.remove(node);
      else this.touch(node, kind);
    }
    if (++this.writes % SWEEP_EVERY === 0) this.sweep(now);
  }

  delete(key: string): void {
    const node = this.map.get(key);
    if (node !== undefined) this.remove(node);
  }

  clear(): void {
    // Entries read before the clear must not pass for stored ones if they are written back.
    for (const node of this.map.values()) node.list = DETACHED;
    this.map.clear();
    for (const sentinel of this.lists) sentinel.younger = sentinel.older = sentinel;
    this.counts.fill(0);
  }

  private insert(key: string, entry: MemoryEntry<unknown>, now: number, kind: KeyKind): void {
    const node = entry instanceof KeyNode && entry.key === key ? entry : new KeyNode(key);
    node.value = entry.value;
    node.expiresAt = entry.expiresAt;
    this.map.set(key, node);
    this.link(node, kind === 'lockout' ? LOCKOUT : PROBATION);
    if (this.map.size > this.maxKeys) this.evict(node, now);
  }

  /** Moves a stored node to the young end of the list it belongs on now (written again: off probation). */
  private touch(node: KeyNode, kind: KeyKind): void {
    const list = kind === 'lockout' ? LOCKOUT : node.list === PROBATION ? PROTECTED : node.list;
    if (list === node.list && this.lists[list].older === node) return;
    this.unlink(node);
    this.link(node, list);
  }

  /** Makes room for `fresh`, just inserted: expired keys first, then by list (see the class comment). */
  private evict(fresh: KeyNode, now: number): void {
    for (let list = PROBATION; list <= LOCKOUT && this.map.size > this.maxKeys; list++) {
      this.dropExpired(list, now, EXPIRED_PER_EVICTION);
    }
    while (this.map.size > this.maxKeys) this.remove(this.victim(fresh));
  }

  /** The oldest key of the first list in eviction order that has one other than `fresh`. */
  private victim(fresh: KeyNode): KeyNode {
    const order = this.counts[PROBATION] > this.probationFloor ? PROBATION_FIRST : PROBATION_LAST;
    for (const list of order) {
      const oldest = this.lists[list].younger;
      if (oldest !== this.lists[list] && oldest !== fresh) return oldest;
    }
    return fresh; // not reached: the table is over maxKeys >= 1, so it holds another key
  }

  /** A few expired keys at the old end of each list go every few writes, so expired state goes without a timer. */
  private sweep(now: number): void {
    for (let list = PROBATION; list <= LOCKOUT; list++) this.dropExpired(list, now, EXPIRED_PER_SWEEP);
  }

  private dropExpired(list: number, now: number, most: number): void {
    const sentinel = this.lists[list];
    for (let i = 0; i < most && sentinel.younger !== sentinel && sentinel.younger.expiresAt <= now; i++) {
      this.remove(sentinel.younger);
    }
  }

  private remove(node: KeyNode): void {
    this.unlink(node);
    node.list = DETACHED;
    this.map.delete(node.key);
  }

  private link(node: KeyNode, list: number): void {
    const sentinel = this.lists[list];
    node.younger = sentinel;
    node.older = sentinel.older;
    sentinel.older.younger = node;
    sentinel.older = node;
    node.list = list;
    this.counts[list]++;
  }

  private unlink(node: KeyNode): void {
    node.older.younger = node.younger;
    node.younger.older = node.older;
    this.counts[node.list]--;
  }
}
