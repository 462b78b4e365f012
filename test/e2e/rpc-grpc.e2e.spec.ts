import { fileURLToPath } from 'node:url';
import { credentials, loadPackageDefinition, Metadata, status, type ServiceError } from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { Transport, type GrpcOptions } from '@nestjs/microservices';
import protobuf from 'protobufjs';
import { freePort } from '../support/redis-server.js';
import { GrpcOrdersController } from './fixtures/rpc/grpc-orders.controller.js';
import { startRpcApp, tenant, type RpcTestApp } from './fixtures/rpc/rpc-app.js';
import { STORE_KINDS, useStoreOptions } from './support/e2e-stores.js';

/**
 * Nest's gRPC transport, called by a plain @grpc/grpc-js client: a refusal is the RESOURCE_EXHAUSTED status with
 * the wait in the trailing metadata (`retry-after-ms`) and a google.rpc.RetryInfo in `grpc-status-details-bin`;
 * `header:<name>` reads the call's metadata, `ip` the peer address.
 */
const PROTO = fileURLToPath(new URL('./fixtures/rpc/orders.proto', import.meta.url));

// google.rpc.Status and RetryInfo, with Any and Duration as their wire format has them: to read the trailer back.
const statusProto = protobuf.parse(`
  syntax = "proto3";
  message Status { int32 code = 1; string message = 2; repeated Any details = 3; }
  message Any { string type_url = 1; bytes value = 2; }
  message RetryInfo { Duration retry_delay = 1; }
  message Duration { int64 seconds = 1; int32 nanos = 2; }
`, { keepCase: true }).root;

type OrdersClient = Record<string, (request: object, metadata: Metadata, done: (error: ServiceError | null, reply: unknown) => void) => void> & { close(): void };

const storeOptions = useStoreOptions();

describe.each(STORE_KINDS)('rate limits on the gRPC transport on the %s store', (kind) => {
  let t: RpcTestApp;
  let orders: OrdersClient;
  beforeAll(async () => {
    const url = `127.0.0.1:${await freePort()}`;
    const server: GrpcOptions = { transport: Transport.GRPC, options: { package: 'orders', protoPath: PROTO, url } };
    t = await startRpcApp(server, storeOptions(kind), { controllers: [GrpcOrdersController] });
    const pkg = loadPackageDefinition(loadSync(PROTO, { keepCase: true, defaults: true })) as unknown as { orders: { Orders: new (url: string, c: unknown) => OrdersClient } };
    orders = new pkg.orders.Orders(url, credentials.createInsecure());
  });
  afterAll(async () => {
    orders?.close();
    await t?.app.close();
  });

  const call = (method: string, request: object, headers: Record<string, string> = {}) =>
    new Promise<unknown>((resolve, reject) => {
      const metadata = new Metadata();
      for (const [name, value] of Object.entries(headers)) metadata.set(name, value);
      orders[method](request, metadata, (error, reply) => (error ? reject(error) : resolve(reply)));
    });
  const refusal = async (promise: Promise<unknown>): Promise<ServiceError> => {
    const error = await promise.then(
      () => undefined,
      (e: ServiceError) => e,
    );
    if (!error) throw new Error('expected the call to be refused');
    return error;
  };

  it('refuses a call past its rule with RESOURCE_EXHAUSTED, the message as details and the wait in the trailing metadata', async () => {
    const who = tenant();
    expect(await call('Quote', { tenant: who, n: 1 })).toEqual({ n: 1 });
    expect(await call('Quote', { tenant: who, n: 2 })).toEqual({ n: 2 });
    const error = await refusal(call('Quote', { tenant: who, n: 3 }));
    expect(error.code).toBe(status.RESOURCE_EXHAUSTED);
    expect(error.details).toBe('Too Many Requests');
    expect(error.metadata.get('retry-after-ms')).toEqual(['30000']);
  });

  it('carries a google.rpc.RetryInfo of the wait in grpc-status-details-bin', async () => {
    const who = tenant();
    await call('Quote', { tenant: who });
    await call('Quote', { tenant: who });
    const error = await refusal(call('Quote', { tenant: who }));
    const [details] = error.metadata.get('grpc-status-details-bin') as Buffer[];
    const decoded = statusProto.lookupType('Status').toObject(statusProto.lookupType('Status').decode(details), { longs: Number });
    expect(decoded).toMatchObject({ code: status.RESOURCE_EXHAUSTED, message: 'Too Many Requests' });
    expect(decoded.details).toHaveLength(1);
    expect(decoded.details[0].type_url).toBe('type.googleapis.com/google.rpc.RetryInfo');
    const retryInfo = statusProto.lookupType('RetryInfo').toObject(statusProto.lookupType('RetryInfo').decode(decoded.details[0].value), { longs: Number });
    expect(retryInfo).toEqual({ retry_delay: { seconds: 30 } });
  });

  it('counts a payload-keyed rule per tenant and serves the refused one again once the wait has passed', async () => {
    const [a, b] = [tenant(), tenant()];
    await call('Quote', { tenant: a });
    await call('Quote', { tenant: a });
    expect((await refusal(call('Quote', { tenant: a }))).code).toBe(status.RESOURCE_EXHAUSTED);
    expect(await call('Quote', { tenant: b, n: 7 })).toEqual({ n: 7 });
    t.clock.advance(30_000);
    expect(await call('Quote', { tenant: a, n: 8 })).toEqual({ n: 8 });
  });

  it('refuses a call without the key of its rule with INVALID_ARGUMENT naming the key', async () => {
    const error = await refusal(call('Quote', { n: 1 }));
    expect(error.code).toBe(status.INVALID_ARGUMENT);
    expect(error.details).toBe('Rate limit key "body:tenant" is missing from the message');
  });

  it("counts header:<name> per value of the call's metadata", async () => {
    const [a, b] = [tenant(), tenant()];
    expect(await call('Tagged', { n: 1 }, { 'x-tenant': a })).toEqual({ n: 1 });
    expect((await refusal(call('Tagged', { n: 2 }, { 'x-tenant': a }))).code).toBe(status.RESOURCE_EXHAUSTED);
    expect(await call('Tagged', { n: 3 }, { 'x-tenant': b })).toEqual({ n: 3 });
  });

  it("counts key 'ip' per peer address", async () => {
    expect(await call('Peer', { n: 1 })).toEqual({ n: 1 });
    expect((await refusal(call('Peer', { n: 2 }))).code).toBe(status.RESOURCE_EXHAUSTED);
    expect(t.logs.errors).toEqual([]);
  });
});
