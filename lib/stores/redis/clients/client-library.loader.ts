import type * as IoRedis from 'ioredis';
import type { CreatableClientLibrary } from '../../../interfaces/redis-client.interface.js';

/**
 * The client libraries the module can create a client of from a URL or options, in the order it looks for them when
 * `clientLibrary` is not set. GLIDE is not among them: its client is created asynchronously and fails to open while
 * Redis is down, where an app must still start (pass a GlideClient as `store` instead).
 */
export const CREATABLE_LIBRARIES: readonly CreatableClientLibrary[] = ['ioredis', 'iovalkey', 'node-redis'];
export type CreatableLibrary = CreatableClientLibrary;

/** The npm package of each library. */
export const LIBRARY_PACKAGE: Record<CreatableLibrary, string> = { ioredis: 'ioredis', iovalkey: 'iovalkey', 'node-redis': 'redis' };

/** What the module uses of ioredis, or of iovalkey (a fork with the same API). */
export type IoRedisLibrary = Pick<typeof IoRedis, 'Redis' | 'Cluster' | 'Command'>;

/** What the module uses of node-redis: `createClient`. */
export interface NodeRedisLibrary {
  createClient(options: Record<string, unknown>): unknown;
}

const loading = new Map<CreatableLibrary, Promise<unknown>>();

/**
 * The library's module, loaded once, or undefined when it is not installed. Loaded when first needed, never at the
 * module's own load: every library is an optional peer dependency, and an app has only the one it uses.
 */
export function loadLibrary(library: 'ioredis' | 'iovalkey'): Promise<IoRedisLibrary | undefined>;
export function loadLibrary(library: 'node-redis'): Promise<NodeRedisLibrary | undefined>;
export function loadLibrary(library: CreatableLibrary): Promise<IoRedisLibrary | NodeRedisLibrary | undefined>;
export function loadLibrary(library: CreatableLibrary): Promise<unknown> {
  let loaded = loading.get(library);
  if (!loaded) {
    loaded = importLibrary(library).then(
      (module) => namespaceOf(module),
      (error: unknown) => {
        if (isNotInstalled(error, LIBRARY_PACKAGE[library])) return undefined;
        throw error;
      },
    );
    loading.set(library, loaded);
  }
  return loaded;
}

// Literal specifiers, so that bundlers see them.
function importLibrary(library: CreatableLibrary): Promise<unknown> {
  if (library === 'ioredis') return import('ioredis');
  if (library === 'iovalkey') return import('iovalkey');
  return import('redis');
}

/** A CommonJS package imported from an ES module may come as its `default`. */
function namespaceOf(module: unknown): unknown {
  const m = module as { default?: unknown; createClient?: unknown; Redis?: unknown };
  return m.Redis !== undefined || m.createClient !== undefined ? m : (m.default ?? m);
}

function isNotInstalled(error: unknown, packageName: string): boolean {
  const { code, message } = (error ?? {}) as { code?: string; message?: string };
  return (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') && typeof message === 'string' && message.includes(`'${packageName}'`);
}
