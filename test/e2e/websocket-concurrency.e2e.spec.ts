import { WebSocket } from 'ws';
import { STORES, useRedisServer } from './fixtures/guard-app.js';
import { admittedWithin, REFUSED, useExportsGateway, wsGate as gate } from './fixtures/concurrency/exports.gateway.js';

/** What Nest's WebSocket exception filter sends for an error that is not a WsException. */
const FAILED = { event: 'exception', data: { status: 'error', message: 'Internal server error' } };

const redis = useRedisServer();

/** Each store, with RateLimitInterceptor (which holds the leases) on the gateway or for every handler (`globalInterceptor`). */
const SETUPS = STORES.flatMap((store) => (['gateway', 'global'] as const).map((interceptor) => [store, interceptor] as const));

describe.each(SETUPS)('a concurrency limit of 1 per user on a WebSocket gateway (platform-ws) with the %s store (RateLimitInterceptor: %s)', (store, interceptor) => {
  const { connect, nextUser } = useExportsGateway(store, redis, interceptor);

  it('refuses a second message from the same client while its first is held, with an exception carrying the 429 body', async () => {
    const client = await connect(nextUser());
    client.send('export', { id: 1 });
    await gate.until(1);
    expect(await client.request('quick', 2)).toEqual(REFUSED);
    expect(client.socket.readyState).toBe(WebSocket.OPEN);
    gate.open();
    expect(await client.next()).toEqual({ event: 'exported', data: 1 });
  });

  it('admits a new message on the same connection once the held one has completed: the slot is released per message', async () => {
    const client = await connect(nextUser());
    client.send('export', { id: 1 });
    await gate.until(1);
    expect(await client.request('quick', 2)).toEqual(REFUSED);
    gate.open();
    expect(await client.next()).toEqual({ event: 'exported', data: 1 });
    expect(await client.request('quick', 3)).toEqual({ event: 'quick', data: 3 });
    // The slot is free for a held message again, and taken while it is held.
    client.send('export', { id: 4 });
    await gate.until(2);
    expect(await client.request('quick', 5)).toEqual(REFUSED);
    gate.open();
    expect(await client.next()).toEqual({ event: 'exported', data: 4 });
  });

  it('frees the slot of a handler that threw', async () => {
    const client = await connect(nextUser());
    client.send('export', { id: 1, fail: true });
    await gate.until(1);
    expect(await client.request('quick', 2)).toEqual(REFUSED);
    gate.open();
    expect(await client.next()).toMatchObject(FAILED);
    expect(await client.request('quick', 3)).toEqual({ event: 'quick', data: 3 });
  });

  it('counts each user on a slot of their own', async () => {
    const first = await connect(nextUser());
    const second = await connect(nextUser());
    first.send('export', { id: 1 });
    await gate.until(1);
    expect(await second.request('quick', 2)).toEqual({ event: 'quick', data: 2 });
    gate.open();
    expect(await first.next()).toEqual({ event: 'exported', data: 1 });
  });

  it('frees the slot of a client that disconnects while its handler is held, before the handler ends', async () => {
    const user = nextUser();
    const leaving = await connect(user);
    const staying = await connect(user);
    leaving.send('export', { id: 1 });
    await gate.until(1);
    // The two connections share the user's one slot.
    expect(await staying.request('quick', 2)).toEqual(REFUSED);
    await leaving.close();
    // The handler is still held at the gate: only the disconnection can have freed the slot.
    expect(await admittedWithin(staying)).toBe(true);
    // Freed once: the other connection's held message takes the one slot, and holds it.
    staying.send('export', { id: 3 });
    await gate.until(2);
    expect(await staying.request('quick', 4)).toEqual(REFUSED);
    gate.open();
    expect(await staying.next()).toEqual({ event: 'exported', data: 3 });
  });
});
