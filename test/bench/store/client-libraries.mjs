// The store bench's `clients` group: our module with a client of each library passed as `store`, beside
// rate-limiter-flexible (RLF) on a client of the same library. Each client is opened as test/support/redis-clients.ts
// opens it (the settings the README asks of a client passed in: no offline queue, no resend after a reconnect);
// RLF gets a client opened the same way, with auto-pipelining on and off where the library has that setting.
import { GlideClient } from '@valkey/valkey-glide';
import { Redis } from 'ioredis';
import { Redis as IoValkey } from 'iovalkey';
import { RateLimiterRedis, RateLimiterValkey, RateLimiterValkeyGlide } from 'rate-limiter-flexible';
import { createClient as createClient6 } from 'redis';
import { createClient as createClient5 } from 'redis5';
import { packageVersion } from '../support/environment.mjs';
import { ADMIT_ALL } from './memory-cases.mjs';
import { moduleSubject, rlfSubject } from './subjects.mjs';

export const CLIENT_ALGORITHMS = ['fixed-window', 'sliding-window'];
/** The library our figures of the other libraries are compared with. */
export const REFERENCE_LIBRARY = 'ioredis';
/** GLIDE's request timeout for the bench's clients: far above the module's timeoutMs (50 ms), as the README asks. */
const GLIDE_REQUEST_TIMEOUT_MS = 5_000;

async function ioredisLike(Client, port, autopipeline) {
  const client = new Client({
    host: '127.0.0.1',
    port,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    autoResendUnfulfilledCommands: false,
    enableAutoPipelining: autopipeline,
    lazyConnect: true,
  });
  await client.connect();
  return { client, close: async () => void client.disconnect() };
}

async function nodeRedis(createClient, port) {
  const client = createClient({ url: `redis://127.0.0.1:${port}`, disableOfflineQueue: true });
  client.on('error', () => undefined);
  await client.connect();
  return { client, close: async () => void client.destroy() };
}

async function glide(port) {
  const client = await GlideClient.createClient({ addresses: [{ host: '127.0.0.1', port }], requestTimeout: GLIDE_REQUEST_TIMEOUT_MS });
  return { client, close: async () => client.close() };
}

/**
 * RLF's Valkey limiters call `server.call` and `server.register_function`, Valkey's names for `redis.call` and
 * `redis.register_function`: Redis 7.0 has only the latter and refuses the scripts. On the bench's redis-server they
 * run with `redis.` in place of `server.`, the same scripts otherwise. RateLimiterValkey takes its script as an
 * option (RLF 11.4's default, renamed); RateLimiterValkeyGlide builds its function libraries itself, so the GLIDE
 * client it gets renames them in FUNCTION LOAD, which RLF sends only until a load succeeded, during the warm-up (FCALL,
 * per decision, is untouched).
 */
const VALKEY_INCR_TTL_SCRIPT = `
redis.call('set', KEYS[1], 0, 'EX', ARGV[2], 'NX')
local consumed = redis.call('incrby', KEYS[1], ARGV[1])
local ttl = redis.call('pttl', KEYS[1])
return {consumed, ttl}
`;

function onRedisFunctions(client) {
  const functionLoad = client.functionLoad;
  client.functionLoad = (library, options) => functionLoad.call(client, String(library).replaceAll('server.', 'redis.'), options);
  return client;
}

/**
 * Per library: how a client is opened (`autopipeline` where the library has the setting: ioredis's and
 * iovalkey's `enableAutoPipelining`; node-redis pipelines a turn's commands by itself, GLIDE multiplexes), and
 * the RLF limiter that runs on it, as RLF's README shows it.
 */
export const CLIENT_LIBRARIES = [
  {
    id: 'ioredis',
    name: 'ioredis',
    version: packageVersion('ioredis'),
    pipelining: [true, false],
    open: (port, autopipeline = false) => ioredisLike(Redis, port, autopipeline),
    rlf: { name: 'RateLimiterRedis', make: (client, options) => new RateLimiterRedis({ storeClient: client, ...options }) },
  },
  {
    id: 'node-redis-5',
    name: 'node-redis 5',
    version: packageVersion('redis5'),
    pipelining: [undefined],
    open: (port) => nodeRedis(createClient5, port),
    rlf: { name: 'RateLimiterRedis (useRedisPackage)', make: (client, options) => new RateLimiterRedis({ storeClient: client, useRedisPackage: true, ...options }) },
  },
  {
    id: 'node-redis-6',
    name: 'node-redis 6',
    version: packageVersion('redis'),
    pipelining: [undefined],
    open: (port) => nodeRedis(createClient6, port),
    rlf: { name: 'RateLimiterRedis (useRedisPackage)', make: (client, options) => new RateLimiterRedis({ storeClient: client, useRedisPackage: true, ...options }) },
  },
  {
    id: 'iovalkey',
    name: 'iovalkey',
    version: packageVersion('iovalkey'),
    pipelining: [true, false],
    open: (port, autopipeline = false) => ioredisLike(IoValkey, port, autopipeline),
    rlf: { name: 'RateLimiterValkey', make: (client, options) => new RateLimiterValkey({ storeClient: client, customIncrTtlLuaScript: VALKEY_INCR_TTL_SCRIPT, ...options }) },
  },
  {
    id: 'glide',
    name: 'GLIDE',
    version: packageVersion('@valkey/valkey-glide'),
    pipelining: [undefined],
    open: (port) => glide(port),
    rlf: { name: 'RateLimiterValkeyGlide', make: (client, options) => new RateLimiterValkeyGlide({ storeClient: onRedisFunctions(client), ...options }) },
  },
];

const onOff = (on) => (on ? 'on' : 'off');
export const clientOursId = (library, algorithm) => `clients-${library}-ours-${algorithm}`;
export const clientRlfId = (library, autopipeline) => `clients-${library}-rlf${autopipeline === undefined ? '' : `-ap-${onOff(autopipeline)}`}`;

/** Our module on a client of `library` passed as `store` (coalescing on, the default); the client is closed after the app. */
async function oursOnClient(library, port, algorithm) {
  const opened = await library.open(port);
  try {
    const subject = await moduleSubject({ store: opened.client, algorithm, limit: ADMIT_ALL, coalesce: true });
    return {
      call: subject.call,
      close: async () => {
        await subject.close();
        await opened.close();
      },
    };
  } catch (error) {
    await opened.close();
    throw error;
  }
}

export function clientCases() {
  const cases = [];
  for (const library of CLIENT_LIBRARIES) {
    for (const algorithm of CLIENT_ALGORITHMS) {
      cases.push({
        id: clientOursId(library.id, algorithm),
        group: 'clients',
        label: `${library.name}: ours ${algorithm} (module, client passed as store), coalescing on`,
        make: ({ port }) => oursOnClient(library, port, algorithm),
      });
    }
    for (const autopipeline of library.pipelining) {
      cases.push({
        id: clientRlfId(library.id, autopipeline),
        group: 'clients',
        label: `${library.name}: ${library.rlf.name}${autopipeline === undefined ? '' : `, auto-pipelining ${onOff(autopipeline)}`}`,
        make: async ({ port, round }) => rlfSubject({ opened: await library.open(port, autopipeline), makeLimiter: library.rlf.make, limit: ADMIT_ALL, prefix: `rlf${round}` }),
      });
    }
  }
  return cases;
}
