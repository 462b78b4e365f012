import type { IncomingMessage } from 'node:http';

/** What the guard needs from an Express request, a Fastify request, or a raw Node request. */
export interface HttpRequestLike {
  ip?: string;
  raw?: IncomingMessage;
  socket?: { remoteAddress?: string };
  headers?: Record<string, string | string[] | undefined>;
}
