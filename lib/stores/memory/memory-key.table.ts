import type { MemoryEntry } from '../../algorithms/algorithm.interface.js';

/** What a key holds, as far as eviction cares: rule state, or a lockout (which is the costliest to forget). */
export type KeyKind = 'state' | 'lockout';

// The lists a key can be on, in the order they give up their oldest key when the table is full.
/** Written once since it appeared: a flood of made-up trackers lands here and churns among itself. */
const PROBATION = 0;
/**
 * Written again (charged a second time, refused, peeked or refunded): a count someone would gain by its loss. In
 * about least-recently-written order (see `passRewritten`).
 */
const PROTECTED = 1;
/** Lockouts, from the moment they are written. */
const LOCKOUT = 2;
/**
 * Keys that expired or were emptied, kept in their space's Map with nothing in them, oldest first: a key written
 * again takes its node back. Deleting a Map entry and setting it again cost V8 300 ns at 10,000 keys and 850 ns at
 * 100,000 (its hash table is rebuilt as deleted entries pile up), and a token bucket's key expires whenever the
 * bucket is full, so between most requests of a client below its rate. They count toward `maxKeys` with the rest,
 * and go before any live key when room is needed.
 */
const EMPTY = 3;
const DETACHED = -1;
/** Probation gives up its oldest first while it holds more than `probationFloor` keys; else it goes last. */
const PROBATION_FIRST = [PROBATION, PROTECTED, LOCKOUT] as const;
const PROBATION_LAST = [PROTECTED, LOCKOUT, PROBATION] as const;

/** The list a key starts on when it is stored: a lockout's, or probation. */
const firstList = (kind: KeyKind): number => (kind === 'lockout' ? LOCKOUT : PROBATION);

/** Empty keys kept at most, as a share of maxKeys, once a sweep finds more (the oldest then go from the Maps). */
const EMPTY_SHARE = 1 / 4;
/** Empty keys a sweep drops at most. */
const EMPTY_PER_SWEEP = 64;
/** Old-end entries checked for expiry per list: on every eviction, and every SWEEP_EVERY writes. */
const EXPIRED_PER_EVICTION = 4;
const EXPIRED_PER_SWEEP = 64;
const SWEEP_EVERY = 32;
/** Counts written again that an eviction sends back to the young end at most, before it takes the oldest anyway. */
const PASSED_PER_EVICTION = 16;
/** And every SWEEP_EVERY writes, before expired keys are looked for. */
const PASSED_PER_SWEEP = 4;

/**
 * The keys of one namespace, by tracker: one rule's state (`<prefix>:<rule>:<tag>:`) or its lockouts. A decision
 * looks its key up by the caller's tracker string, whose hash V8 keeps on the string, instead of building and
 * hashing a whole key string each time.
 */
export class KeySpace {
  readonly nodes = new Map<string, KeyNode>();
  /** False once the table has forgotten this (empty) space: whoever kept it asks the table for the name again. */
  attached = true;
  constructor(readonly name: string) {}
}

/**
 * An entry and its place in its list. The algorithms see only `value` and `expiresAt`; the links are intrusive, so
 * moving a key to the young end is a few pointer writes, with no Map delete and insert (which leave holes that
 * every later walk of the Map pays for).
 */
export class KeyNode implements MemoryEntry<unknown> {
  value: unknown = undefined;
  /** A number from the start (NaN, not the small integer 0), so that V8 keeps the field for doubles only. */
  integer = NaN;
  expiresAt = 0;
  /** Toward the young end (the list's sentinel from the youngest). */
  younger: KeyNode = this;
  /** Toward the old end (the list's sentinel from the oldest). */
  older: KeyNode = this;
  /** The list it is on, or DETACHED when it is not stored (never written, dropped, or cleared). */
  list = DETACHED;
  /** A count written again since it was last put at the young end of the protected list (see `touch`). */
  rewritten = false;
  constructor(
    public space: KeySpace,
    public key: string,
  ) {}
}

/**
 * The memory store's keys, bounded at `maxKeys` with an eviction that costs O(1) per write however many keys there
 * are. Three lists (a segmented LRU): when the table is full, expired keys found at the old end of any list go
 * first; then the oldest key seen only once (probation); then about the least recently written count (protected:
 * a count written again since it reached the young end gets one more pass, as in a CLOCK cache); and lockouts
 * last. So a flood of distinct trackers only displaces other keys seen once, while counts and lockouts stay as
 * long as there are at most `maxKeys - probationFloor` of them. Probation always keeps room for the
 * newest `probationFloor` keys, so a new tracker is still counted when the other lists fill the table. Keys that
 * expired or were emptied stay in their Map, empty, until written again or until room is needed (see EMPTY):
 * stored and empty keys together are at most `maxKeys`.
 */
export class MemoryKeyTable {
  private readonly spaces = new Map<string, KeySpace>();
  /** Spaces held when empty spaces were last forgotten: more than twice as many, and they are looked for again. */
  private spacesAfterPrune = 0;
  /** The space of the string-keyed methods (`get`, `set`, `delete`). */
  private readonly plain: KeySpace;
  /** One sentinel per list: `sentinel.older` is the youngest key, `sentinel.younger` the oldest. */
  private readonly lists: KeyNode[];
  private readonly counts = [0, 0, 0, 0];
  private stored = 0;
  /** Keys seen once that the other lists cannot push out. */
  readonly probationFloor: number;
  private writes = 0;
  /** The node of the key last evicted, kept for the next new key (see `fresh`). */
  private spare: KeyNode | undefined;
  /** Empty keys the sweep leaves in the Maps (see EMPTY). */
  private readonly mostEmpty: number;

  constructor(readonly maxKeys: number) {
    this.probationFloor = Math.max(1, Math.floor(maxKeys / 8));
    this.plain = this.space('');
    const none = new KeySpace('');
    this.lists = [new KeyNode(none, ''), new KeyNode(none, ''), new KeyNode(none, ''), new KeyNode(none, '')];
    this.mostEmpty = Math.floor(maxKeys * EMPTY_SHARE);
  }

  get size(): number {
    return this.stored;
  }

  /**
   * The space of this name, kept for as long as it holds keys. Empty spaces are forgotten once they are more than
   * half of all, so that rules come and go (names made per call, config reloads) without the table growing.
   */
  space(name: string): KeySpace {
    let space = this.spaces.get(name);
    if (space === undefined) {
      if (this.spaces.size >= 2 * this.spacesAfterPrune + 64) this.pruneSpaces();
      this.spaces.set(name, (space = new KeySpace(name)));
    }
    return space;
  }

  /**
   * The live entry for a tracker in a space, or a new empty one (not stored until `commit`) when it is missing or
   * expired. Commit it before writing anything else: a node evicted meanwhile may be given to another key (`fresh`).
   */
  lookup(space: KeySpace, key: string, now: number): KeyNode {
    const node = space.nodes.get(key);
    if (node === undefined) return this.fresh(space, key);
    if (node.expiresAt > now) return node;
    // Expired: emptied, and the node kept as the empty entry (an empty key's expiresAt is 0).
    if (node.list !== EMPTY) this.empty(node);
    return node;
  }

  /**
   * Stores a node `lookup` returned, as the algorithm left it, or drops its key if it holds nothing. A key already
   * stored moves to the young end of its list, from probation to protected; a new one starts on probation, or on
   * the lockout list.
   */
  commit(node: KeyNode, now: number, kind: KeyKind = 'state'): void {
    if (node.list === EMPTY) {
      if (node.value !== undefined) this.refill(node, kind);
    } else if (node.list !== DETACHED) {
      if (node.value === undefined) this.empty(node);
      else this.touch(node, kind);
    } else if (node.value !== undefined) {
      // Read before another node of the key was stored (or before it was dropped): the later write wins.
      const current = node.space.nodes.get(node.key);
      if (current === undefined) this.insert(node, now, kind);
      else this.copyInto(current, node, kind);
    } else {
      const current = node.space.nodes.get(node.key);
      if (current !== undefined && current.list !== EMPTY) this.empty(current);
    }
    if (++this.writes % SWEEP_EVERY === 0) this.sweep(now);
  }

  /** The value of a tracker's live key in a space, or undefined (an expired key is emptied): a read that writes nothing back. */
  valueOf(space: KeySpace, key: string, now: number): unknown {
    const node = space.nodes.get(key);
    if (node === undefined) return undefined;
    if (node.expiresAt > now) return node.value;
    if (node.list !== EMPTY) this.empty(node);
    return undefined;
  }

  /** Forgets a tracker's key in a space. */
  forget(space: KeySpace, key: string): void {
    const node = space.nodes.get(key);
    if (node !== undefined) this.remove(node);
  }

  /** The live entry for a key of the plain space (see `lookup`). */
  get(key: string, now: number): MemoryEntry<unknown> {
    return this.lookup(this.plain, key, now);
  }

  /**
   * Stores an entry of the plain space (one returned by `get`, or any other object, whose fields are then copied),
   * or drops the key if the entry holds nothing.
   */
  set(key: string, entry: MemoryEntry<unknown>, now: number, kind: KeyKind = 'state'): void {
    if (entry instanceof KeyNode && entry.space === this.plain && entry.key === key) {
      this.commit(entry, now, kind);
      return;
    }
    const node = this.lookup(this.plain, key, now);
    node.value = entry.value;
    node.integer = entry.integer;
    node.expiresAt = entry.expiresAt;
    this.commit(node, now, kind);
  }

  delete(key: string): void {
    this.forget(this.plain, key);
  }

  clear(): void {
    // Entries read before the clear must not pass for stored ones if they are written back.
    for (const space of this.spaces.values()) {
      for (const node of space.nodes.values()) node.list = DETACHED;
      space.nodes.clear();
    }
    for (const sentinel of this.lists) sentinel.younger = sentinel.older = sentinel;
    this.counts.fill(0);
    this.stored = 0;
  }

  private pruneSpaces(): void {
    for (const [name, space] of this.spaces) {
      if (space.nodes.size === 0 && space !== this.plain) {
        space.attached = false;
        this.spaces.delete(name);
      }
    }
    this.spacesAfterPrune = this.spaces.size;
  }

  private copyInto(current: KeyNode, from: KeyNode, kind: KeyKind): void {
    current.value = from.value;
    current.integer = from.integer;
    current.expiresAt = from.expiresAt;
    if (current.list === EMPTY) this.refill(current, kind);
    else this.touch(current, kind);
  }

  private insert(node: KeyNode, now: number, kind: KeyKind): void {
    // A space forgotten while this node was read (it was emptied): the node goes to the one that has its name now.
    const space = node.space.attached ? node.space : this.space(node.space.name);
    if (space !== node.space) {
      const moved = new KeyNode(space, node.key);
      moved.value = node.value;
      moved.integer = node.integer;
      moved.expiresAt = node.expiresAt;
      node = moved;
    }
    space.nodes.set(node.key, node);
    this.stored++;
    this.link(node, firstList(kind));
    if (this.stored + this.counts[EMPTY] > this.maxKeys) this.evict(node, now);
  }

  /** A stored key's state gone (expired, or written empty): its node stays in its Map, empty (see EMPTY). */
  private empty(node: KeyNode): void {
    this.unlink(node);
    node.value = undefined;
    node.expiresAt = 0;
    this.stored--;
    this.link(node, EMPTY);
  }

  /** An empty key written again: stored again, as a new key (on probation, or a lockout), in the node it kept. */
  private refill(node: KeyNode, kind: KeyKind): void {
    this.unlink(node);
    this.stored++;
    this.link(node, firstList(kind));
  }

  /**
   * A stored node written again: off probation, to the young end of the list it belongs on now. A count already
   * protected is only marked: moving it would write two other nodes, scattered in memory, on every decision. An
   * eviction passes a marked count at the old end to the young end instead (see `passRewritten`).
   */
  private touch(node: KeyNode, kind: KeyKind): void {
    if (node.list === PROTECTED && kind === 'state') {
      node.rewritten = true;
      return;
    }
    const list = kind === 'lockout' ? LOCKOUT : node.list === PROBATION ? PROTECTED : node.list;
    if (list === node.list && this.lists[list].older === node) return;
    this.unlink(node);
    this.link(node, list);
  }

  /**
   * Makes room for `fresh`, just inserted: empty keys first, then expired ones, then by list (see the class
   * comment). Stored and empty keys together stay within maxKeys.
   */
  private evict(fresh: KeyNode, now: number): void {
    if (this.counts[EMPTY] === 0) {
      for (let list = PROBATION; list <= LOCKOUT && this.stored > this.maxKeys; list++) {
        this.dropExpired(list, now, EXPIRED_PER_EVICTION);
      }
    }
    while (this.stored + this.counts[EMPTY] > this.maxKeys) {
      const empty = this.lists[EMPTY].younger;
      const victim = empty !== this.lists[EMPTY] ? empty : this.victim(fresh);
      this.remove(victim);
      if (victim.space !== this.plain) this.spare = victim;
    }
  }

  /**
   * A new, unstored node for a key. A full table evicts a key for every new one, and a node made per decision was
   * garbage the GC had to move out of the young generation first (a node lives as long as the key is kept): the node
   * of the last evicted key is used again. Only one the table alone held: not one of the plain space, which `get`
   * hands to callers who may keep it.
   */
  private fresh(space: KeySpace, key: string): KeyNode {
    const node = this.spare;
    if (node === undefined) return new KeyNode(space, key);
    this.spare = undefined;
    node.space = space;
    node.key = key;
    node.value = undefined;
    node.expiresAt = 0;
    return node;
  }

  /** The oldest key of the first list in eviction order that has one other than `fresh`. */
  private victim(fresh: KeyNode): KeyNode {
    const order = this.counts[PROBATION] > this.probationFloor ? PROBATION_FIRST : PROBATION_LAST;
    for (const list of order) {
      if (list === PROTECTED) this.passRewritten(PASSED_PER_EVICTION);
      const oldest = this.lists[list].younger;
      if (oldest !== this.lists[list] && oldest !== fresh) return oldest;
    }
    return fresh; // not reached: the table is over maxKeys >= 1, so it holds another key
  }

  /**
   * Counts at the protected list's old end that were written again since they were put at its young end go back
   * there, unmarked, at most `most` of them: a second chance, as in a CLOCK cache. So counts go in about
   * least-recently-written order, at O(1) per write.
   */
  private passRewritten(most: number): void {
    const sentinel = this.lists[PROTECTED];
    for (let i = 0; i < most && sentinel.younger.rewritten; i++) {
      const node = sentinel.younger;
      this.unlink(node);
      this.link(node, PROTECTED);
    }
  }

  /**
   * A few expired keys at the old end of each list go every few writes, so expired state goes without a timer. A few
   * counts written again are passed first: one written all along would otherwise hold the expired ones behind it.
   */
  private sweep(now: number): void {
    this.passRewritten(PASSED_PER_SWEEP);
    for (let list = PROBATION; list <= LOCKOUT; list++) this.dropExpired(list, now, EXPIRED_PER_SWEEP);
    // Empty keys beyond a share of maxKeys leave the Maps, oldest first: idle keys do not hold memory for ever.
    const sentinel = this.lists[EMPTY];
    for (let i = 0; i < EMPTY_PER_SWEEP && this.counts[EMPTY] > this.mostEmpty; i++) this.remove(sentinel.younger);
  }

  private dropExpired(list: number, now: number, most: number): void {
    const sentinel = this.lists[list];
    for (let i = 0; i < most && sentinel.younger !== sentinel && sentinel.younger.expiresAt <= now; i++) {
      this.empty(sentinel.younger);
    }
  }

  /** Drops a key, stored or empty, from its Map. */
  private remove(node: KeyNode): void {
    this.unlink(node);
    if (node.list !== EMPTY) this.stored--;
    node.list = DETACHED;
    node.space.nodes.delete(node.key);
  }

  private link(node: KeyNode, list: number): void {
    const sentinel = this.lists[list];
    node.younger = sentinel;
    node.older = sentinel.older;
    sentinel.older.younger = node;
    sentinel.older = node;
    node.list = list;
    node.rewritten = false;
    this.counts[list]++;
  }

  private unlink(node: KeyNode): void {
    node.older.younger = node.younger;
    node.younger.older = node.older;
    this.counts[node.list]--;
  }
}
