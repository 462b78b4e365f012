import type { MicroserviceOptions } from '@nestjs/microservices';
import { startRpcApp, tenant, until, type RpcTestApp } from '../fixtures/rpc/rpc-app.js';
import { STORE_KINDS, useStoreOptions } from './e2e-stores.js';

/** A client of one transport, as the scenarios use it. */
export interface RpcTestClient {
  /** A request-response message; `headers` travel as the transport carries them (metadata, user properties, ...). */
  send(pattern: string, data: object, headers?: Record<string, string>): Promise<unknown>;
  /** A request-response message whose every answer is awaited: resolves with them once the answer stream completes. */
  sendAll(pattern: string, data: object): Promise<unknown[]>;
  /** An event; resolves once the transport has taken it. */
  emit(pattern: string, data: object): Promise<void>;
  close(): Promise<void>;
}

export interface RpcTransportCase {
  readonly name: string;
  /** The microservice's options (called once the suite's broker runs). */
  server(): MicroserviceOptions;
  client(): Promise<RpcTestClient>;
  /** Whether the transport tells the peer's address (`key: 'ip'`): TCP does; brokers do not. */
  readonly peerAddress: boolean;
}

/**
 * The scenarios every transport passes (README, "Recipe: microservices"), once per store, on one app and one client
 * per store; each test uses its own tenants, so that tests share no bucket.
 */
export function describeRpcTransport(transport: RpcTransportCase): void {
  const storeOptions = useStoreOptions();

  describe.each(STORE_KINDS)(`rate limits on ${transport.name} on the %s store`, (kind) => {
    let t: RpcTestApp;
    let client: RpcTestClient;
    beforeAll(async () => {
      t = await startRpcApp(transport.server(), storeOptions(kind));
      client = await transport.client();
    });
    afterAll(async () => {
      await client?.close();
      await t?.app.close();
    });

    it('refuses a message past its rule with an RpcException carrying statusCode 429, the message, the rule, the limit and the wait', async () => {
      const who = tenant();
      expect(await client.send('quote', { tenant: who, n: 1 })).toEqual({ quoted: 1 });
      expect(await client.send('quote', { tenant: who, n: 2 })).toEqual({ quoted: 2 });
      await expect(client.send('quote', { tenant: who, n: 3 })).rejects.toMatchObject({
        statusCode: 429,
        message: 'Too Many Requests',
        rule: 'quote',
        limit: 2,
        retryAfterMs: 30_000,
        retryAfter: 30,
      });
    });

    it('serves the refused tenant again once the wait has passed', async () => {
      const who = tenant();
      await client.send('quote', { tenant: who });
      await client.send('quote', { tenant: who });
      await expect(client.send('quote', { tenant: who })).rejects.toMatchObject({ statusCode: 429 });
      t.clock.advance(30_000);
      expect(await client.send('quote', { tenant: who, n: 4 })).toEqual({ quoted: 4 });
    });

    it('counts a payload-keyed rule per tenant: one tenant refused, another still served', async () => {
      const [a, b] = [tenant(), tenant()];
      await client.send('quote', { tenant: a });
      await client.send('quote', { tenant: a });
      await expect(client.send('quote', { tenant: a })).rejects.toMatchObject({ statusCode: 429, rule: 'quote' });
      expect(await client.send('quote', { tenant: b, n: 1 })).toEqual({ quoted: 1 });
    });

    it("refuses a message without the key of the handler's own rule with a 400 RpcException naming the rule and the key, and one log line", async () => {
      const before = t.logs.warnings.length;
      await expect(client.send('quote', { n: 1 })).rejects.toMatchObject({
        statusCode: 400,
        message: 'Rate limit key "body:tenant" is missing from the message',
        rule: 'quote',
      });
      expect(t.logs.warnings.slice(before)).toEqual([expect.stringContaining('rule "quote" counts per "body:tenant", which the message does not carry')]);
    });

    it("leaves a message without the key to the handlers' own rules: the module's default rule applies only where the key is", async () => {
      for (let n = 0; n < 5; n++) expect(await client.send('plain', { n })).toEqual({ plain: n });
      const who = tenant();
      for (let n = 0; n < 3; n++) expect(await client.send('plain', { tenant: who, n })).toEqual({ plain: n });
      await expect(client.send('plain', { tenant: who })).rejects.toMatchObject({ statusCode: 429, rule: 'default', limit: 3 });
    });

    it("counts header:<name> per value of the transport's header", async () => {
      const [a, b] = [tenant(), tenant()];
      expect(await client.send('tagged', { n: 1 }, { 'x-tenant': a })).toEqual({ tagged: 1 });
      await expect(client.send('tagged', { n: 2 }, { 'x-tenant': a })).rejects.toMatchObject({ statusCode: 429, rule: 'tagged' });
      expect(await client.send('tagged', { n: 3 }, { 'x-tenant': b })).toEqual({ tagged: 3 });
      await expect(client.send('tagged', { n: 4 })).rejects.toMatchObject({ statusCode: 400, rule: 'tagged' });
    });

    if (transport.peerAddress) {
      it("counts key 'ip' per peer address", async () => {
        expect(await client.send('peer', { n: 1 })).toEqual({ peer: 1 });
        await expect(client.send('peer', { n: 2 })).rejects.toMatchObject({ statusCode: 429, rule: 'peer' });
      });
    } else {
      it("refuses a message to a rule of key 'ip', the transport telling no peer address", async () => {
        await expect(client.send('peer', { n: 1 })).rejects.toMatchObject({ statusCode: 400, rule: 'peer' });
      });
    }

    it('drops a refused event, counted as a refusal, with nothing logged as an error; the next one passes once the window allows', async () => {
      const who = tenant();
      const refused = t.refusals.length;
      await client.emit('audit', { tenant: who, n: 1 });
      await until('the first event was handled', () => t.events.count('audit', who) === 1);
      await client.emit('audit', { tenant: who, n: 2 });
      await until('the second event was refused', () => t.refusals.length > refused);
      expect(t.refusals.slice(refused)).toEqual(['audit']);
      t.clock.advance(60_000);
      await client.emit('audit', { tenant: who, n: 3 });
      await until('the third event was handled', () => t.events.count('audit', who) === 2);
      expect(t.events.seen.filter((e) => (e.data as { tenant: string }).tenant === who).map((e) => (e.data as { n: number }).n)).toEqual([1, 3]);
      expect(t.logs.errors).toEqual([]);
    });
  });
}
