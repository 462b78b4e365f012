import { Redis } from 'ioredis';
import { defineRule, RedisStore } from '../../lib/index.js';
import { LoadedScripts, sendScript } from '../../lib/stores/redis/clients/loaded-scripts.js';
import { decisionScript, loadDriverCode } from '../../lib/stores/redis/lua-script.loader.js';
import { startRedis, uniquePrefix, type TestRedis } from '../support/redis-server.js';

// A script's function library is loaded in the background after the script's first call on a server; calls go as
// FCALL once the load is answered. A call sent meanwhile must not go as EVALSHA: after a SCRIPT FLUSH its NOSCRIPT
// answer would come after the load's, and its resend would be decided after the FCALLs of later calls. Here the
// load's answer is held (the library is loaded at once, through another connection) and given at a chosen moment:
// after a call sent while it loads, before the calls made after it.
const RULE = defineRule({ algorithm: 'fixed-window', limit: 100, window: '1h' }, 'order');
const WINDOW_US = 3_600_000_000;

/** Lets queued promise callbacks run, and no I/O: no reply is read meanwhile. */
async function microtasks(): Promise<void> {
  for (let i = 0; i < 20; i++) await Promise.resolve();
}

describe('calls made while a function library loads, across a SCRIPT FLUSH', () => {
  let redis: TestRedis;
  let admin: Redis;
  beforeAll(async () => {
    redis = await startRedis({ own: true });
    admin = redis.client();
  });
  afterAll(() => redis.stop());
  beforeEach(() => admin.call('FUNCTION', 'FLUSH'));

  /** A FUNCTION LOAD made through another connection at once, whose answer is given when `release` is called. */
  function heldLoad(): { load(args: string[]): Promise<unknown>; release(): void } {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    return { load: (args) => admin.call(args[0], ...args.slice(1)).then(async (reply) => (await held, reply)), release };
  }

  it('on an ioredis client: decides them in the order they were made, each counted once', async () => {
    const client = new Redis({ host: '127.0.0.1', port: redis.port });
    const load = heldLoad();
    const call = client.call.bind(client) as (...args: string[]) => Promise<unknown>;
    (client as unknown as { call(...args: string[]): Promise<unknown> }).call = (...args) => (args[0].toUpperCase() === 'FUNCTION' ? load.load(args) : call(...args));
    try {
      const store = new RedisStore(client, { keyPrefix: uniquePrefix() });
      await store.peek('warm', RULE); // EVAL; the library's load asked, its answer held
      await admin.script('FLUSH');
      const first = store.consume('k', RULE); // alone, at once, while the library loads
      await microtasks();
      load.release();
      await microtasks(); // the load's answer is in: the calls made from here go as FCALL
      const rest = Array.from({ length: 19 }, () => store.consume('k', RULE));
      const decisions = await Promise.all([first, ...rest]);
      expect(decisions.map((d) => d.remaining)).toEqual(Array.from({ length: 20 }, (_, i) => 99 - i));
      expect(await store.peek('k', RULE, 0)).toMatchObject({ remaining: 80 });
    } finally {
      client.disconnect();
    }
  });

  it('through the adapters of node-redis and GLIDE (sendScript): decides them in the order they were made', async () => {
    const { fn, ...script } = decisionScript(loadDriverCode('fixed-window'));
    const lua = { ...script, fn };
    const client = new Redis({ host: '127.0.0.1', port: redis.port });
    const load = heldLoad();
    const send = (args: string[]) => (args[0] === 'FUNCTION' ? load.load(args) : client.call(args[0], ...args.slice(1)));
    const loaded = new LoadedScripts();
    const key = `${uniquePrefix()}:k`;
    // A lone consume of one unit (the driver's short form), on the app's clock.
    const consume = () => sendScript(loaded, '', lua, ['', '', '1', key, String(1_767_225_600_000_000), '', 'c', 'fw', '100', '3600000', '0'], send);
    const remaining = (reply: unknown) => Math.floor(Number(reply) / (WINDOW_US + 1));
    try {
      await consume(); // EVAL; the library's load asked, its answer held
      await admin.script('FLUSH');
      const first = consume(); // while the library loads
      await microtasks();
      load.release();
      await microtasks();
      expect(loaded.hasFunction('', lua.sha)).toBe(true);
      const second = consume(); // as FCALL
      expect([remaining(await first), remaining(await second)]).toEqual([98, 97]);
    } finally {
      client.disconnect();
    }
  });
});
