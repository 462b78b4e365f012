import { defineRule, RedisStore } from '../../lib/index.js';
import type { LeaseStore } from '../../lib/interfaces/lease-store.interface.js';
import { MemoryLeaseStore } from '../../lib/stores/leases/memory-lease.store.js';
import { RedisLeaseStore } from '../../lib/stores/leases/redis-lease.store.js';
import { STORE_KINDS, useStores } from '../support/stores.js';

const exports = defineRule({ algorithm: 'concurrency', limit: 2, leaseMs: '10s' }, 'exports');

describe.each(STORE_KINDS)('concurrency leases on the %s store', (kind) => {
  const get = useStores(kind);
  /** The lease store of the test's kind, on the same client, clock and prefix as the decision store. */
  function leaseStore(): { leases: LeaseStore; advance: (ms: number) => void } {
    const { store, clock, prefix } = get();
    const options = { clock: clock.now, keyPrefix: prefix };
    const leases = kind === 'memory' ? new MemoryLeaseStore(options) : new RedisLeaseStore((store as RedisStore).client, options);
    return { leases, advance: (ms) => clock.advance(ms) };
  }

  it('grants `limit` leases and refuses the next while they are held', async () => {
    const { leases } = leaseStore();
    const granted = [await leases.acquire('u1', exports), await leases.acquire('u1', exports)];
    expect(granted.map((d) => [d.acquired, d.inFlight])).toEqual([[true, 1], [true, 2]]);
    const third = await leases.acquire('u1', exports);
    expect(third).toEqual({ acquired: false, limit: 2, inFlight: 2, retryAfterMs: 10_000 });
  });

  it('frees a slot when a lease is released', async () => {
    const { leases } = leaseStore();
    const first = await leases.acquire('u1', exports);
    await leases.acquire('u1', exports);
    await first.lease!.release();
    expect((await leases.acquire('u1', exports)).acquired).toBe(true);
  });

  it('frees one slot only when a lease is released twice', async () => {
    const { leases } = leaseStore();
    const first = await leases.acquire('u1', exports);
    await leases.acquire('u1', exports);
    await first.lease!.release();
    await first.lease!.release();
    expect((await leases.acquire('u1', exports)).acquired).toBe(true);
    expect((await leases.acquire('u1', exports)).acquired).toBe(false);
  });

  it('frees the slot of a lease nobody released once leaseMs has passed, and not before', async () => {
    const { leases, advance } = leaseStore();
    await leases.acquire('u1', exports);
    advance(4_000);
    await leases.acquire('u1', exports);
    advance(5_999);
    expect(await leases.acquire('u1', exports)).toMatchObject({ acquired: false, retryAfterMs: 1 });
    advance(1);
    expect(await leases.acquire('u1', exports)).toMatchObject({ acquired: true, inFlight: 2 });
  });

  it('keeps a renewed lease past its first expiry', async () => {
    const { leases, advance } = leaseStore();
    const first = await leases.acquire('u1', exports);
    await leases.acquire('u1', exports);
    advance(9_000);
    expect(await first.lease!.renew()).toBe(true);
    advance(9_000);
    // The second lease expired; the renewed one still holds its slot.
    expect(await leases.acquire('u1', exports)).toMatchObject({ acquired: true, inFlight: 2 });
    expect((await leases.acquire('u1', exports)).acquired).toBe(false);
  });

  it('reports a lease that expired as lost on renewal, and takes no slot back', async () => {
    const { leases, advance } = leaseStore();
    const first = await leases.acquire('u1', exports);
    advance(10_000);
    expect(await first.lease!.renew()).toBe(false);
    await leases.acquire('u1', exports);
    expect(await leases.acquire('u1', exports)).toMatchObject({ acquired: true, inFlight: 2 });
  });

  it('counts each tracker on slots of its own', async () => {
    const { leases } = leaseStore();
    await leases.acquire('u1', exports);
    await leases.acquire('u1', exports);
    expect((await leases.acquire('u2', exports)).acquired).toBe(true);
  });

  it('applies a lowered limit at once to the leases already held', async () => {
    const { leases } = leaseStore();
    const held = await leases.acquire('u1', exports);
    await leases.acquire('u1', exports);
    const lowered = defineRule({ algorithm: 'concurrency', limit: 1, leaseMs: '10s' }, 'exports');
    await held.lease!.release();
    expect((await leases.acquire('u1', lowered)).acquired).toBe(false);
  });

  it('refuses a rule of another algorithm, naming the concurrency algorithm', async () => {
    const { leases } = leaseStore();
    await expect(leases.acquire('u1', defineRule({ limit: 2, window: '1m' }, 'rate'))).rejects.toThrow(/algorithm 'concurrency'/);
  });
});
