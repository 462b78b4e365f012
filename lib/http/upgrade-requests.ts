import { Inject, Injectable, Optional, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { EventEmitter } from 'node:events';
import type { IncomingMessage } from 'node:http';

// Keyed by socket: an entry lives exactly as long as the connection it describes.
const upgradeRequests = new WeakMap<object, IncomingMessage>();

/** The HTTP upgrade request that opened this socket, when it came through a server being watched. */
export function upgradeRequestOf(socket: unknown): IncomingMessage | undefined {
  return socket !== null && typeof socket === 'object' ? upgradeRequests.get(socket) : undefined;
}

/**
 * Remembers the upgrade request of every connection `server` upgrades, so that a WebSocket message can be
 * traced back to the proxy headers of its handshake (the `ws` library keeps only the socket). Listens only while
 * someone else does: with no 'upgrade' listener Node answers an upgrade request as plain HTTP, and one listener
 * of ours alone would leave it hanging. Returns a function that stops watching.
 */
export function watchUpgradeRequests(server: EventEmitter): () => void {
  const record = (request: IncomingMessage, socket: object) => void upgradeRequests.set(socket, request);
  const othersListen = () => server.listeners('upgrade').some((listener) => listener !== record);
  const attach = () => {
    // First, so the request is known before any gateway sees the connection.
    if (!server.listeners('upgrade').includes(record)) server.prependListener('upgrade', record);
  };
  const onNewListener = (event: string | symbol, listener: unknown) => {
    if (event === 'upgrade' && listener !== record) attach();
  };
  const onRemoveListener = (event: string | symbol) => {
    if (event === 'upgrade' && !othersListen()) server.off('upgrade', record);
  };
  if (othersListen()) attach();
  server.on('newListener', onNewListener);
  server.on('removeListener', onRemoveListener);
  return () => {
    server.off('newListener', onNewListener);
    server.off('removeListener', onRemoveListener);
    server.off('upgrade', record);
  };
}

/**
 * Watches the application's HTTP server for upgrade requests (see `watchUpgradeRequests`); nothing to watch in
 * an application without one. A gateway on its own port has its own server, out of reach.
 */
@Injectable()
export class UpgradeRequestsWatcher implements OnApplicationBootstrap, OnApplicationShutdown {
  private stop?: () => void;

  constructor(@Optional() @Inject(HttpAdapterHost) private readonly adapterHost?: HttpAdapterHost) {}

  onApplicationBootstrap(): void {
    const server: unknown = this.adapterHost?.httpAdapter?.getHttpServer?.();
    if (server && typeof (server as EventEmitter).prependListener === 'function') this.stop ??= watchUpgradeRequests(server as EventEmitter);
  }

  onApplicationShutdown(): void {
    this.stop?.();
    this.stop = undefined;
  }
}
