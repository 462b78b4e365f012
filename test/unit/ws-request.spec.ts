import { EventEmitter } from 'node:events';
import type { IncomingMessage } from 'node:http';
import { ExecutionContextHost } from '@nestjs/core/helpers/execution-context-host.js';
import { clientIp } from '../../lib/http/client-ip.js';
import { requestResponseOf } from '../../lib/http/execution-context.adapter.js';
import { upgradeRequestOf, watchUpgradeRequests } from '../../lib/http/upgrade-requests.js';
import { validateModuleOptions } from '../../lib/config/module-options.validator.js';

const trustLoopback = validateModuleOptions({ trustProxy: 'loopback' }).trustProxy;

/** The request the guard reads for a WebSocket message from `client`. */
function wsRequestOf(client: object) {
  const context = new ExecutionContextHost([client, {}]);
  context.setType('ws');
  return requestResponseOf(context).request!;
}

describe('the request of a WebSocket message', () => {
  // socket.io is not installed here: its client is given in the shape socket.io documents (handshake.address, .headers).
  const socketIoClient = { handshake: { address: '127.0.0.1', headers: { 'x-forwarded-for': '203.0.113.9' } } };

  it('takes the forwarded address of a socket.io handshake through a trusted proxy', () => {
    expect(clientIp(wsRequestOf(socketIoClient), trustLoopback)).toBe('203.0.113.9');
  });

  it('takes the address of a socket.io connection without trustProxy', () => {
    expect(clientIp(wsRequestOf(socketIoClient))).toBe('127.0.0.1');
  });

  it('takes the address of a ws socket whose upgrade request was not seen, ignoring trustProxy', () => {
    const client = { _socket: { remoteAddress: '127.0.0.1' } };
    expect(clientIp(wsRequestOf(client), trustLoopback)).toBe('127.0.0.1');
  });
});

describe('watchUpgradeRequests', () => {
  const upgrade = (server: EventEmitter) => {
    const socket = {};
    const request = { headers: {}, socket } as unknown as IncomingMessage;
    server.emit('upgrade', request, socket, Buffer.alloc(0));
    return { socket, request };
  };
  const gateway = () => undefined;

  it('does not listen to upgrades while nobody else does, so Node still answers them as HTTP', () => {
    const server = new EventEmitter();
    watchUpgradeRequests(server);
    expect(server.listenerCount('upgrade')).toBe(0);
  });

  it('remembers upgrade requests by socket once a gateway listens, even one that came later', () => {
    const server = new EventEmitter();
    watchUpgradeRequests(server);
    server.on('upgrade', gateway);
    const { socket, request } = upgrade(server);
    expect(upgradeRequestOf(socket)).toBe(request);
  });

  it('stops listening when the last gateway does', () => {
    const server = new EventEmitter();
    watchUpgradeRequests(server);
    server.on('upgrade', gateway);
    server.off('upgrade', gateway);
    expect(server.listenerCount('upgrade')).toBe(0);
  });

  it('takes every listener of its own off when stopped', () => {
    const server = new EventEmitter();
    server.on('upgrade', gateway);
    const stop = watchUpgradeRequests(server);
    stop();
    expect([server.listenerCount('upgrade'), server.listenerCount('newListener'), server.listenerCount('removeListener')]).toEqual([1, 0, 0]);
  });
});
