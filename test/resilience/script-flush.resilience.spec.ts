import type { Redis } from 'ioredis';
import { startRedis, type TestRedis } from '../support/redis-server.js';
import { APP_CLIENTS, commandCalls, startResilientApp, type AppClient, type ResilientApp } from './support/resilient-app.js';

// SCRIPT FLUSH (or a restart, or a failover to a replica) drops the scripts' cache: the next EVALSHA gets
// NOSCRIPT, and the call must still be decided on Redis, not by the failure policy, whatever the client: each
// adapter resends the script's source itself (GLIDE words the error "NoScriptError"). FUNCTION FLUSH does the same
// to the function libraries that ioredis and iovalkey call by FCALL: "Function not found", and the same resend.
// Both are flushed here: a call goes as FCALL or as EVALSHA depending on whether its library was loaded yet.
let redis: TestRedis;
let admin: Redis;
beforeAll(async () => {
  redis = await startRedis({ own: true });
  admin = redis.client();
});
afterAll(() => redis?.stop());

const flushScripts = () => Promise.all([admin.script('FLUSH'), admin.call('FUNCTION', 'FLUSH')]);

/** Calls of `command` Redis answered with an error (NOSCRIPT, "Function not found") since the last RESETSTAT. */
const failedCalls = (stats: string, command: string) => Number(new RegExp(`^cmdstat_${command}:.*failed_calls=(\\d+)`, 'm').exec(stats)?.[1] ?? 0);

describe.each<AppClient>(APP_CLIENTS)('SCRIPT FLUSH and FUNCTION FLUSH between two calls, the app on %s', (client) => {
  let rl: ResilientApp;

  beforeAll(async () => {
    rl = await startResilientApp(redis, { failurePolicy: 'closed' }, client);
  });
  afterAll(() => rl?.close());

  const lastDegraded = () => rl.events.at(-1)!.result.decisions.map((d) => d.degraded);

  it('decides a one-rule call on Redis after the flush, and counts it', async () => {
    expect((await rl.get('one')).status).toBe(200);
    await flushScripts();
    expect((await rl.get('one')).status).toBe(200);
    expect(lastDegraded()).toEqual([undefined]);
    expect(await admin.zcard(rl.stateKey('one'))).toBe(2);
  });

  it('decides a call of two algorithms (the combined script) on Redis after the flush', async () => {
    expect((await rl.get('two', '/pair')).status).toBe(200);
    await flushScripts();
    expect((await rl.get('two', '/pair')).status).toBe(200);
    expect(lastDegraded()).toEqual([undefined, undefined]);
  });

  it('gets there by one call answered NOSCRIPT or "Function not found" and a retry with the script source, once', async () => {
    await rl.get('three');
    await admin.config('RESETSTAT');
    await flushScripts();
    await rl.get('three');
    const stats = `${await admin.info('commandstats')}${await admin.info('errorstats')}`;
    expect(commandCalls(stats, 'evalsha') + commandCalls(stats, 'fcall')).toBe(1);
    expect(failedCalls(stats, 'evalsha') + failedCalls(stats, 'fcall')).toBe(1);
    expect(commandCalls(stats, 'eval')).toBe(1);
    expect(failedCalls(stats, 'eval')).toBe(0);
    expect(rl.store.breaker.state).toBe('closed');
  });
});
