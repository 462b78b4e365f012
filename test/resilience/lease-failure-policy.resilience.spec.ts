import { Redis } from 'ioredis';
import { defineRule, safeClientOptions, type FailurePolicy } from '../../lib/index.js';
import { ResilientLeaseStore } from '../../lib/resilience/resilient-lease.store.js';
import { MemoryLeaseStore } from '../../lib/stores/leases/memory-lease.store.js';
import { RedisLeaseStore } from '../../lib/stores/leases/redis-lease.store.js';
import { freePort } from '../support/redis-server.js';

const exports = defineRule({ algorithm: 'concurrency', limit: 1, leaseMs: '1m' }, 'exports');

describe('leases while Redis is unreachable', () => {
  let client: Redis;
  beforeAll(async () => {
    // Nothing listens on this port: every command fails at once (no offline queue).
    client = new Redis({ port: await freePort(), ...safeClientOptions(50), lazyConnect: true });
    client.on('error', () => undefined);
  });
  afterAll(() => client.disconnect());
  const store = (failurePolicy: FailurePolicy, errors: string[] = []) =>
    new ResilientLeaseStore(new RedisLeaseStore(client), new MemoryLeaseStore(), { failurePolicy, timeoutMs: 50, onError: (_e, op) => errors.push(op) });

  it("admits with a lease that holds nothing under 'open'", async () => {
    const leases = store('open');
    const first = await leases.acquire('u1', exports);
    const second = await leases.acquire('u1', exports);
    expect([first, second].map((d) => [d.acquired, d.degraded])).toEqual([[true, 'open'], [true, 'open']]);
    await expect(first.lease!.release()).resolves.toBeUndefined();
  });

  it("refuses under 'closed', telling the client to retry in 1 s", async () => {
    expect(await store('closed').acquire('u1', exports)).toMatchObject({ acquired: false, degraded: 'closed', retryAfterMs: 1_000 });
  });

  it("limits in this process under 'memory'", async () => {
    const leases = store('memory');
    const first = await leases.acquire('u1', exports);
    expect(first).toMatchObject({ acquired: true, degraded: 'memory' });
    expect(await leases.acquire('u1', exports)).toMatchObject({ acquired: false, degraded: 'memory' });
    await first.lease!.release();
    expect((await leases.acquire('u1', exports)).acquired).toBe(true);
  });

  it("follows the rule's own failure policy over the store's", async () => {
    const strict = defineRule({ algorithm: 'concurrency', limit: 1, failurePolicy: 'closed' }, 'strict');
    expect((await store('open').acquire('u1', strict)).acquired).toBe(false);
  });

  it('tells onError of each failed acquire', async () => {
    const errors: string[] = [];
    await store('open', errors).acquire('u1', exports);
    expect(errors).toEqual(['acquire']);
  });
});
