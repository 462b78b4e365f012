import { startRpcApp, tenant, until, type RpcTestApp } from './fixtures/rpc/rpc-app.js';
import { heldMessages as held, SlotsController, UnheldSlotsController } from './fixtures/rpc/slots.controller.js';
import { STORE_KINDS, useStoreOptions } from './support/e2e-stores.js';
import type { RpcTestClient } from './support/rpc-scenarios.js';
import { QUICK_TRANSPORTS, useQuickTransports } from './support/rpc-transports.js';

/**
 * Concurrency rules on microservice handlers (SlotsController: 2 in flight per tenant): RateLimitInterceptor takes
 * the leases once the guard admitted the message and releases them when the handler's Promise or Observable ends,
 * however it ends; an event's when its handler ends.
 */
const transports = useQuickTransports();
const storeOptions = useStoreOptions();

const CASES = QUICK_TRANSPORTS.flatMap((transport) => STORE_KINDS.map((kind) => [transport, kind] as const));

describe.each(CASES)('a concurrency rule on microservice handlers over %s on the %s store', (transportName, kind) => {
  let t: RpcTestApp;
  let client: RpcTestClient;
  beforeAll(async () => {
    const transport = transports(transportName);
    t = await startRpcApp(transport.server(), storeOptions(kind), { controllers: [SlotsController, UnheldSlotsController] });
    client = await transport.client();
  });
  afterAll(async () => {
    held.reset();
    await client?.close();
    await t?.app.close();
  });
  beforeEach(() => held.reset());

  const probe = (who: string) => client.send('slot.quick', { tenant: who, id: 'probe' });
  const FULL = { statusCode: 429, message: 'Too Many Requests', rule: 'slots', limit: 2 };

  it('refuses a message with a 429 RpcException while 2 are in flight, and admits one once a held one has finished', async () => {
    const who = tenant();
    const first = client.send('slot.promise', { tenant: who, id: 'a' });
    const second = client.send('slot.promise', { tenant: who, id: 'b' });
    await held.until(2);
    await expect(probe(who)).rejects.toMatchObject(FULL);
    // Per tenant: another one has slots of its own.
    expect(await probe(tenant())).toEqual({ quick: 'probe' });
    held.finish('a');
    expect(await first).toEqual({ done: 'a' });
    expect(await probe(who)).toEqual({ quick: 'probe' });
    // The freed slot is taken again by a held message, and held while it is.
    const third = client.send('slot.promise', { tenant: who, id: 'c' });
    await held.until(3);
    await expect(probe(who)).rejects.toMatchObject(FULL);
    held.finish('b');
    held.finish('c');
    expect(await Promise.all([second, third])).toEqual([{ done: 'b' }, { done: 'c' }]);
    expect(await probe(who)).toEqual({ quick: 'probe' });
  });

  it('frees the slot of a handler whose Promise rejects', async () => {
    const who = tenant();
    const failing = client.send('slot.promise', { tenant: who, id: 'a', fail: true });
    const other = client.send('slot.promise', { tenant: who, id: 'b' });
    await held.until(2);
    await expect(probe(who)).rejects.toMatchObject(FULL);
    held.finish('a');
    await expect(failing).rejects.toEqual({ failed: 'a' });
    expect(await probe(who)).toEqual({ quick: 'probe' });
    held.finish('b');
    expect(await other).toEqual({ done: 'b' });
  });

  it("holds the slot of an Observable handler until its stream completes, not at its first answer", async () => {
    const who = tenant();
    const first = client.sendAll('slot.stream', { tenant: who, id: 'a' });
    const second = client.sendAll('slot.stream', { tenant: who, id: 'b' });
    // Both have answered `started` and are held before their last answer.
    await held.until(2);
    await expect(probe(who)).rejects.toMatchObject(FULL);
    held.finish('a');
    expect(await first).toEqual(['started', 'finished']);
    expect(await probe(who)).toEqual({ quick: 'probe' });
    held.finish('b');
    expect(await second).toEqual(['started', 'finished']);
  });

  it('frees the slot of an Observable handler whose stream errors', async () => {
    const who = tenant();
    const failing = client.sendAll('slot.stream', { tenant: who, id: 'a', fail: true });
    const other = client.sendAll('slot.stream', { tenant: who, id: 'b' });
    await held.until(2);
    await expect(probe(who)).rejects.toMatchObject(FULL);
    held.finish('a');
    await expect(failing).rejects.toEqual({ failed: 'a' });
    expect(await probe(who)).toEqual({ quick: 'probe' });
    held.finish('b');
    expect(await other).toEqual(['started', 'finished']);
  });

  it('drops an event while 2 are in flight, counted as a refusal of the rule, and frees the slot when an event handler ends', async () => {
    const who = tenant();
    const refused = t.refusals.length;
    await client.emit('slot.event', { tenant: who, id: 'a' });
    await client.emit('slot.event', { tenant: who, id: 'b' });
    await held.until(2);
    await expect(probe(who)).rejects.toMatchObject(FULL);
    const probesRefused = t.refusals.length;
    await client.emit('slot.event', { tenant: who, id: 'c' });
    await until('the third event was refused', () => t.refusals.length > probesRefused);
    expect(t.refusals.slice(refused)).toEqual(['slots', 'slots']);
    held.finish('a');
    await until('the first event was handled', () => t.events.count('slot.event', who) === 1);
    expect(await probe(who)).toEqual({ quick: 'probe' });
    held.finish('b');
    await until('the second event was handled', () => t.events.count('slot.event', who) === 2);
    // The refused event never reached its handler.
    expect(held.arrived).toBe(2);
  });

  it('frees the slot of an event handler that throws', async () => {
    const who = tenant();
    await client.emit('slot.event', { tenant: who, id: 'a', fail: true });
    await client.emit('slot.event', { tenant: who, id: 'b' });
    await held.until(2);
    await expect(probe(who)).rejects.toMatchObject(FULL);
    held.finish('a');
    await until('the failing event was handled', () => t.events.count('slot.event', who) === 1);
    expect(await probe(who)).toEqual({ quick: 'probe' });
    held.finish('b');
    await until('the second event was handled', () => t.events.count('slot.event', who) === 2);
  });

  it('refuses a message to a concurrency rule no RateLimitInterceptor holds the leases of, naming the fix in one log line', async () => {
    const errors = t.logs.errors.length;
    await expect(client.send('slot.unheld', { tenant: tenant(), id: 'a' })).rejects.toMatchObject({ status: 'error', message: 'Internal server error' });
    expect(t.logs.errors.slice(errors).map((args) => String(args[0]))).toEqual([expect.stringContaining('must hold their leases: set globalInterceptor: true')]);
  });
});
