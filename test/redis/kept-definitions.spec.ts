import type { Redis } from 'ioredis';
import { decisionScript, loadDriverCode } from '../../lib/stores/redis/lua-script.loader.js';
import { startRedis, uniquePrefix, type TestRedis } from '../support/redis-server.js';

// A decision script loaded as a function library keeps the rule definitions and call arguments it has parsed from one
// FCALL to the next (lua/includes/driver.lua, DEFINED and PARSED). Each call must still decide exactly as if it were
// the first: a call argument names definitions by their place in its own call, and an override, a lockout's start or
// a key read in one call must not be seen by the next. Called here with the driver's arguments as the store sends them.
const NOW_US = 1_767_225_600_000_000;
const WINDOW_MS = 60_000;
const { fn } = decisionScript(loadDriverCode('fixed-window'));

/** The remaining of a packed admission (see the driver's reply), or the reply as it is. */
const remaining = (reply: unknown): unknown => (typeof reply === 'number' && reply >= 0 ? Math.floor(reply / (WINDOW_MS * 1000 + 1)) : reply);

describe('a function library keeps definitions and calls from one FCALL to the next', () => {
  let redis: TestRedis;
  let admin: Redis;
  let prefix: string;
  beforeAll(async () => {
    redis = await startRedis({ own: true });
    admin = redis.client();
  });
  afterAll(() => redis.stop());
  beforeEach(async () => {
    await admin.call('FUNCTION', 'FLUSH');
    await admin.call('FUNCTION', 'LOAD', fn!.library);
    prefix = uniquePrefix();
  });

  /** FCALL of a batch: `calls` (the call arguments) over `keys`, with the definitions given, in order. */
  const batch = (keys: string[], calls: string[], ...definitions: string[]) =>
    admin.call('FCALL', fn!.name, keys.length, ...keys, NOW_US, '', calls.length, definitions.length, 0, ...calls, ...definitions) as Promise<unknown[]>;

  it('decides a call argument seen in an earlier call under the definition its own call puts in that place', async () => {
    const five = `fw,5,${WINDOW_MS},0`;
    const ten = `fw,10,${WINDOW_MS},0`;
    expect((await batch([`${prefix}:a`], ['c1'], five, ten)).map(remaining)).toEqual([4]);
    expect((await batch([`${prefix}:b`], ['c1'], ten, five)).map(remaining)).toEqual([9]);
    expect((await batch([`${prefix}:c`, `${prefix}:d`], ['c2', 'c1'], five, ten)).map(remaining)).toEqual([9, 4]);
  });

  it("applies an override only in the call that read it: the next call on the same definition has the rule's own limit", async () => {
    const overridable = `fw+,10,${WINDOW_MS},0`;
    await admin.set(`${prefix}:o1`, `${NOW_US + 3_600_000_000}:50`);
    expect((await batch([`${prefix}:a`, `${prefix}:o1`], ['c1'], overridable)).slice(1).map(remaining)).toEqual([49]);
    expect((await batch([`${prefix}:b`, `${prefix}:o2`], ['c1'], overridable)).slice(1).map(remaining)).toEqual([9]);
  });

  it('sees no lockout in a later call but the one its own lockout key holds', async () => {
    const locking = `fw,1,${WINDOW_MS},30000`;
    const [admitted, refused] = await batch([`${prefix}:a`, `${prefix}:la`, `${prefix}:a`, `${prefix}:la`], ['2:c1'], locking);
    expect([remaining(admitted), refused]).toEqual([0, -1]);
    expect(await admin.exists(`${prefix}:la`)).toBe(1);
    expect((await batch([`${prefix}:b`, `${prefix}:lb`], ['c1'], locking)).map(remaining)).toEqual([0]);
    expect(await admin.exists(`${prefix}:lb`)).toBe(0);
  });

  it("keeps Redis's function memory bounded when every call brings a definition of its own (a limit each request sets)", async () => {
    const vmMemory = async () => Number(/^used_memory_vm_functions:(\d+)/m.exec(await admin.info('memory'))![1]);
    const lone = (limit: number) => admin.call('FCALL', fn!.name, 1, `${prefix}:k${limit}`, NOW_US, '', 'c', `fw,${limit},${WINDOW_MS},0`);
    for (let limit = 1_000; limit < 1_100; limit++) await lone(limit);
    const before = await vmMemory();
    for (let limit = 10_000; limit < 20_000; limit++) await lone(limit);
    // 10,000 definitions kept would take megabytes; at most 64 of them, and what Lua has not collected yet, far less.
    expect((await vmMemory()) - before).toBeLessThan(1_000_000);
  });
});
