/**
 * MemoryKeyTable's integrity under random writes, reads, lockouts, deletes, clears and time: whatever it forgets,
 * it never holds more than maxKeys, never returns a value other than the one last stored, and forgets a live
 * key only when it is full.
 */
import fc from 'fast-check';
import type { MemoryEntry } from '../../lib/algorithms/algorithm.interface.js';
import { MemoryKeyTable, type KeyKind, type KeySpace } from '../../lib/stores/memory/memory-key.table.js';

const KEYS = 10;
const key = fc.integer({ min: 0, max: KEYS - 1 }).map((i) => `k${i}`);
const kind = fc.constantFrom<KeyKind>('state', 'lockout');
const op = fc.oneof(
  // A read, a change in place and the write back, as the algorithms and the store's driver do.
  fc.record({ op: fc.constant('write' as const), key, kind, value: fc.nat(), ttl: fc.integer({ min: 1, max: 40 }) }),
  // A new object written (as the driver writes a lockout).
  fc.record({ op: fc.constant('literal' as const), key, kind, value: fc.nat(), ttl: fc.integer({ min: 1, max: 40 }) }),
  // An entry read, other keys written meanwhile (it may be evicted), then written back.
  fc.record({ op: fc.constant('stale' as const), key, other: key, value: fc.nat(), ttl: fc.integer({ min: 1, max: 40 }) }),
  fc.record({ op: fc.constant('empty' as const), key }),
  fc.record({ op: fc.constant('delete' as const), key }),
  fc.record({ op: fc.constant('advance' as const), ms: fc.integer({ min: 1, max: 30 }) }),
  fc.record({ op: fc.constant('clear' as const) }),
  // An entry read, everything cleared, then the entry written back.
  fc.record({ op: fc.constant('heldOverClear' as const), key, value: fc.nat(), ttl: fc.integer({ min: 1, max: 40 }) }),
);
type Op = typeof op extends fc.Arbitrary<infer T> ? T : never;

interface Step {
  table: MemoryKeyTable;
  /** Keys the table returned a value for before and after the step, and the step itself. */
  before: Map<string, unknown>;
  after: Map<string, unknown>;
  /** What the last write of every key stored, with its expiry; only the live ones count. */
  model: Map<string, { value: unknown; expiresAt: number }>;
  now: number;
  step: Op;
}

/** Replays random steps on a table of random size and calls `check` after each. */
function replay(check: (s: Step) => void): void {
  fc.assert(
    fc.property(fc.integer({ min: 1, max: 8 }), fc.array(op, { maxLength: 200 }), (maxKeys, steps) => {
      const table = new MemoryKeyTable(maxKeys);
      const model = new Map<string, { value: unknown; expiresAt: number }>();
      let now = 1_000;
      let before = new Map<string, unknown>();
      const write = (k: string, entry: MemoryEntry<unknown>, value: number, ttl: number, kind: KeyKind = 'state') => {
        entry.value = value;
        entry.integer = value + 0.5; // kept beside the value, through every way a write reaches the table
        entry.expiresAt = now + ttl;
        table.set(k, entry, now, kind);
        model.set(k, { value, expiresAt: now + ttl });
      };
      for (const step of steps) {
        if (step.op === 'write') write(step.key, table.get(step.key, now), step.value, step.ttl, step.kind);
        if (step.op === 'literal') write(step.key, { value: undefined, integer: NaN, expiresAt: 0 }, step.value, step.ttl, step.kind);
        if (step.op === 'stale') {
          const held = table.get(step.key, now);
          write(step.other, table.get(step.other, now), step.value + 1, step.ttl);
          write(step.key, held, step.value, step.ttl);
        }
        if (step.op === 'empty') {
          const entry = table.get(step.key, now);
          entry.value = undefined;
          table.set(step.key, entry, now);
          model.delete(step.key);
        }
        if (step.op === 'delete') {
          table.delete(step.key);
          model.delete(step.key);
        }
        if (step.op === 'advance') now += step.ms;
        if (step.op === 'clear' || step.op === 'heldOverClear') {
          const held = step.op === 'heldOverClear' ? table.get(step.key, now) : undefined;
          table.clear();
          model.clear();
          if (step.op === 'heldOverClear') write(step.key, held!, step.value, step.ttl);
        }
        const after = new Map<string, unknown>();
        for (let i = 0; i < KEYS; i++) {
          const { value, integer } = table.get(`k${i}`, now);
          if (value !== undefined) after.set(`k${i}`, integer === (value as number) + 0.5 ? value : `${String(value)} with integer ${integer}`);
        }
        check({ table, before, after, model, now, step });
        before = after;
      }
    }),
    { numRuns: 500 },
  );
}

/** Entries in the table's Maps: stored keys, and expired or emptied ones kept for their key's next write. */
function entriesHeld(table: MemoryKeyTable): number {
  const { spaces } = table as unknown as { spaces: Map<string, KeySpace> };
  let held = 0;
  for (const space of spaces.values()) held += space.nodes.size;
  return held;
}

describe('MemoryKeyTable under random steps', () => {
  it('never holds more than maxKeys keys', () => {
    replay(({ table }) => expect(table.size).toBeLessThanOrEqual(table.maxKeys));
  });

  it('never holds more than maxKeys entries in its Maps, emptied keys included', () => {
    replay(({ table }) => expect(entriesHeld(table)).toBeLessThanOrEqual(table.maxKeys));
  });

  it('returns for every key either nothing or the live value last stored under it', () => {
    replay(({ after, model, now }) => {
      for (const [k, value] of after) {
        const stored = model.get(k);
        expect(stored !== undefined && stored.expiresAt > now ? stored.value : 'not live').toBe(value);
      }
    });
  });

  it('forgets a live key only when it is full', () => {
    replay(({ table, before, after, model, now, step }) => {
      if (step.op === 'delete' || step.op === 'empty' || step.op === 'clear') return;
      const forgotten = [...before.keys()].filter((k) => !after.has(k) && (model.get(k)?.expiresAt ?? 0) > now);
      if (forgotten.length > 0) expect(table.size).toBe(table.maxKeys);
    });
  });
});

describe('MemoryKeyTable eviction among counts written again', () => {
  /** Keys written twice (counts, on the protected list), oldest first, then `again` written a third time. */
  function counts(maxKeys: number, many: number, again: string[]): MemoryKeyTable {
    const table = new MemoryKeyTable(maxKeys);
    for (let round = 0; round < 2; round++) for (let i = 0; i < many; i++) store(table, `k${i}`, i);
    for (const key of again) store(table, key, -1);
    return table;
  }
  function store(table: MemoryKeyTable, key: string, value: number): void {
    const entry = table.get(key, 0);
    entry.value = value;
    entry.expiresAt = 1_000;
    table.set(key, entry, 0);
  }
  const held = (table: MemoryKeyTable, key: string) => table.get(key, 0).value !== undefined;

  it('forgets the oldest count not written since the counts after it, not one written again', () => {
    // maxKeys 16 keeps 2 keys seen once; with 15 counts, the second new key pushes out a count.
    const table = counts(16, 15, ['k0']);
    store(table, 'new-1', 0);
    store(table, 'new-2', 0);
    expect(held(table, 'k0')).toBe(true);
    expect(held(table, 'k1')).toBe(false);
    expect(['k2', 'new-1', 'new-2'].every((k) => held(table, k))).toBe(true);
    expect(table.size).toBe(16);
  });

  it('drops expired counts as writes happen, though a count written again all along is older than them', () => {
    const table = new MemoryKeyTable(1_000);
    const write = (key: string, expiresAt: number, now: number) => {
      const entry = table.get(key, now);
      entry.value = 1;
      entry.expiresAt = expiresAt;
      table.set(key, entry, now);
    };
    for (let round = 0; round < 2; round++) {
      write('hot', 1_000_000, 0);
      for (let i = 0; i < 100; i++) write(`short-${i}`, 10, 0);
    }
    // Only 'hot' is written from now on, with the 100 other counts expired behind it; nothing reads them.
    for (let i = 0; i < 320; i++) write('hot', 1_000_000, 20);
    expect(table.size).toBe(1);
  });
});

describe('MemoryKeyTable with keys that expire', () => {
  function write(table: MemoryKeyTable, key: string, expiresAt: number, now: number): void {
    const entry = table.get(key, now);
    entry.value = 1;
    entry.expiresAt = expiresAt;
    table.set(key, entry, now);
  }

  it('keeps an expired key for its next write, with nothing in it', () => {
    const table = new MemoryKeyTable(10);
    write(table, 'bucket', 10, 0);
    expect(table.get('bucket', 20).value).toBeUndefined();
    expect(table.size).toBe(0);
    expect(entriesHeld(table)).toBe(1);
    write(table, 'bucket', 40, 20);
    expect(table.get('bucket', 30).value).toBe(1);
    expect(table.size).toBe(1);
  });

  it('lets go of expired keys beyond a quarter of maxKeys as writes happen', () => {
    const table = new MemoryKeyTable(100);
    for (let i = 0; i < 99; i++) write(table, `short-${i}`, 10, 0);
    for (let i = 0; i < 320; i++) write(table, 'hot', 1_000_000, 20);
    expect(table.size).toBe(1);
    expect(entriesHeld(table)).toBeLessThanOrEqual(1 + 25);
  });

  it('makes room for a new key with an expired one before any live key', () => {
    const table = new MemoryKeyTable(3);
    write(table, 'live-1', 1_000, 0);
    write(table, 'short', 10, 0);
    write(table, 'live-2', 1_000, 0);
    expect(table.get('short', 20).value).toBeUndefined(); // read once expired: kept, empty
    write(table, 'new', 1_000, 20);
    expect(['live-1', 'live-2', 'new'].map((k) => table.get(k, 20).value)).toEqual([1, 1, 1]);
    expect(entriesHeld(table)).toBe(3);
  });
});
