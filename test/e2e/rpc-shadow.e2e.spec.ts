import { Registry } from 'prom-client';
import { startRpcApp, tenant, until, type RpcTestApp } from './fixtures/rpc/rpc-app.js';
import { heldMessages as held, ShadowController } from './fixtures/rpc/slots.controller.js';
import { STORE_KINDS, useStoreOptions } from './support/e2e-stores.js';
import type { RpcTestClient } from './support/rpc-scenarios.js';
import { QUICK_TRANSPORTS, useQuickTransports } from './support/rpc-transports.js';

/**
 * Shadow rules (`mode: 'shadow'`) on microservice handlers (ShadowController): decided and counted as any other, and
 * never refusing a message or an event; a rule in force beside them still refuses.
 */
const transports = useQuickTransports();
const storeOptions = useStoreOptions();

const CASES = QUICK_TRANSPORTS.flatMap((transport) => STORE_KINDS.map((kind) => [transport, kind] as const));

type DecisionEvent = { rules: string[]; allowed: boolean; shadow: boolean };

describe.each(CASES)('shadow rules on microservice handlers over %s on the %s store', (transportName, kind) => {
  let t: RpcTestApp;
  let client: RpcTestClient;
  let registry: Registry;
  const rejected: DecisionEvent[] = [];
  beforeAll(async () => {
    const transport = transports(transportName);
    registry = new Registry();
    t = await startRpcApp(transport.server(), storeOptions(kind), {
      controllers: [ShadowController],
      module: {
        globalInterceptor: true,
        metrics: { registry },
        onRejected: (event) => rejected.push({ rules: event.entries.map((e) => e.rule), allowed: event.result.allowed, shadow: event.shadow === true }),
      },
    });
    client = await transport.client();
  });
  afterAll(async () => {
    held.reset();
    await client?.close();
    await t?.app.close();
  });
  beforeEach(() => held.reset());

  /** The decisions the metrics counted so far, per `rule/result`. */
  async function counted(): Promise<Record<string, number>> {
    const { values } = await registry.getSingleMetric('rate_limit_decisions_total')!.get();
    return Object.fromEntries(values.map((v) => [`${v.labels.rule}/${v.labels.result}`, v.value]));
  }

  /** What the metrics counted since `before`, per `rule/result`. */
  async function countedSince(before: Record<string, number>): Promise<Record<string, number>> {
    const now = await counted();
    return Object.fromEntries(Object.entries(now).flatMap(([name, value]) => (value > (before[name] ?? 0) ? [[name, value - (before[name] ?? 0)]] : [])));
  }

  it('answers every message a shadow rule refuses, each refusal counted as shadow_rejected and reported to onRejected as a shadow one', async () => {
    const who = tenant();
    const [before, reported] = [await counted(), rejected.length];
    for (const id of ['a', 'b', 'c']) expect(await client.send('trial', { tenant: who, id })).toEqual({ trial: id });
    expect(await countedSince(before)).toEqual({ 'trial/allowed': 1, 'trial/shadow_rejected': 2 });
    expect(rejected.slice(reported)).toEqual([
      { rules: ['trial'], allowed: true, shadow: true },
      { rules: ['trial'], allowed: true, shadow: true },
    ]);
  });

  it('refuses by the rule in force beside a shadow rule, and only by it', async () => {
    const who = tenant();
    const before = await counted();
    expect(await client.send('trial.stacked', { tenant: who, id: 'a' })).toEqual({ stacked: 'a' });
    // Refused by `trial` alone, in shadow: answered.
    expect(await client.send('trial.stacked', { tenant: who, id: 'b' })).toEqual({ stacked: 'b' });
    await expect(client.send('trial.stacked', { tenant: who, id: 'c' })).rejects.toMatchObject({ statusCode: 429, rule: 'inforce', limit: 2 });
    expect(await countedSince(before)).toEqual({ 'inforce/allowed': 2, 'inforce/rejected': 1, 'trial/allowed': 1, 'trial/shadow_rejected': 1 });
  });

  it('handles every event a shadow rule refuses, each refusal counted', async () => {
    const who = tenant();
    const [before, reported] = [await counted(), rejected.length];
    for (const id of ['a', 'b', 'c']) await client.emit('trial.event', { tenant: who, id });
    await until('the three events were handled', () => t.events.count('trial.event', who) === 3);
    expect(await countedSince(before)).toEqual({ 'trial/allowed': 1, 'trial/shadow_rejected': 2 });
    expect(rejected.slice(reported)).toEqual([
      { rules: ['trial'], allowed: true, shadow: true },
      { rules: ['trial'], allowed: true, shadow: true },
    ]);
  });

  it('admits a message past a shadow concurrency rule, counted as shadow_rejected, and frees the slots of both when they end', async () => {
    const who = tenant();
    const before = await counted();
    const first = client.send('trial.slots', { tenant: who, id: 'a' });
    await held.until(1);
    // The one slot is taken: the second is admitted all the same, and held too.
    const second = client.send('trial.slots', { tenant: who, id: 'b' });
    await held.until(2);
    expect(await countedSince(before)).toEqual({ 'trial-slots/allowed': 1, 'trial-slots/shadow_rejected': 1 });
    held.finish('a');
    held.finish('b');
    expect(await Promise.all([first, second])).toEqual([{ slots: 'a' }, { slots: 'b' }]);
    // Nothing is left held: the next one gets the slot.
    const third = client.send('trial.slots', { tenant: who, id: 'c' });
    await held.until(3);
    held.finish('c');
    expect(await third).toEqual({ slots: 'c' });
    expect(await countedSince(before)).toEqual({ 'trial-slots/allowed': 2, 'trial-slots/shadow_rejected': 1 });
  });
});
