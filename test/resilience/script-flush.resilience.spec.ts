import type { Redis } from 'ioredis';
import { startRedis, type TestRedis } from '../support/redis-server.js';
import { APP_CLIENTS, commandCalls, startResilientApp, type AppClient, type ResilientApp } from './support/resilient-app.js';

// SCRIPT FLUSH (or a restart, or a failover to a replica) drops the scripts' cache: the next EVALSHA gets
// NOSCRIPT, and the call must still be decided on Redis, not by the failure policy, whatever the client: each
// adapter resends the script's source itself (GLIDE words the error "NoScriptError").
let redis: TestRedis;
let admin: Redis;
beforeAll(async () => {
  redis = await startRedis({ own: true });
  admin = redis.client();
});
afterAll(() => redis?.stop());

describe.each<AppClient>(APP_CLIENTS)('SCRIPT FLUSH between two calls, the app on %s', (client) => {
  let rl: ResilientApp;

  beforeAll(async () => {
    rl = await startResilientApp(redis, { failurePolicy: 'closed' }, client);
  });
  afterAll(() => rl?.close());

  const lastDegraded = () => rl.events.at(-1)!.result.decisions.map((d) => d.degraded);

  it('decides a one-rule call on Redis after the flush, and counts it', async () => {
    expect((await rl.get('one')).status).toBe(200);
    await admin.script('FLUSH');
    expect((await rl.get('one')).status).toBe(200);
    expect(lastDegraded()).toEqual([undefined]);
    expect(await admin.zcard(rl.stateKey('one'))).toBe(2);
  });

  it('decides a call of two algorithms (the combined script) on Redis after the flush', async () => {
    expect((await rl.get('two', '/pair')).status).toBe(200);
    await admin.script('FLUSH');
    expect((await rl.get('two', '/pair')).status).toBe(200);
    expect(lastDegraded()).toEqual([undefined, undefined]);
  });

  it('gets there by NOSCRIPT and a retry with the script source, once', async () => {
    await rl.get('three');
    await admin.config('RESETSTAT');
    await admin.script('FLUSH');
    await rl.get('three');
    const stats = `${await admin.info('commandstats')}${await admin.info('errorstats')}`;
    expect(commandCalls(stats, 'evalsha')).toBe(1);
    expect(commandCalls(stats, 'eval')).toBe(1);
    expect(stats).toMatch(/^errorstat_NOSCRIPT:count=1\b/m);
    expect(rl.store.breaker.state).toBe('closed');
  });
});
