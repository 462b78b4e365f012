import type { ExecutionContext } from '@nestjs/common';
import type { KeySpec } from '../interfaces/rate-limit-policy.interface.js';

/** The request fields keys can come from (Express and Fastify requests both have them). */
export interface KeyedRequest {
  user?: { id?: unknown; sub?: unknown } | null;
  headers?: Record<string, string | string[] | undefined>;
  params?: Record<string, unknown>;
  query?: Record<string, unknown>;
  body?: unknown;
  /** Fastify: the Node request, where Nest middleware (which gets the raw request) sets `user`. */
  raw?: { user?: KeyedRequest['user'] };
}

/**
 * The value a non-IP key names in this request, or undefined when there is none usable. Only strings and
 * finite numbers count: an object or an array would stringify to one shared value for everyone.
 */
export function resolveRequestKey(spec: KeySpec, request: KeyedRequest, context: ExecutionContext): string | undefined | Promise<string | undefined> {
  switch (spec.kind) {
    case 'user': {
      const user = request.user ?? request.raw?.user;
      return usable(user?.id ?? user?.sub);
    }
    case 'header': {
      const value = request.headers?.[spec.path[0]];
      return usable(Array.isArray(value) ? value[0] : value);
    }
    case 'param':
      return usable(request.params?.[spec.path[0]]);
    case 'query':
      return usable(request.query?.[spec.path[0]]);
    case 'body': {
      let value: unknown = request.body;
      for (const part of spec.path) value = value !== null && typeof value === 'object' ? (value as Record<string, unknown>)[part] : undefined;
      return usable(value);
    }
    case 'function': {
      const value = spec.resolve(context);
      return value instanceof Promise ? value.then(usable) : usable(value);
    }
    default:
      return undefined;
  }
}

function usable(value: unknown): string | undefined {
  if (typeof value === 'string') return value === '' ? undefined : value;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return undefined;
}
