import { RmqRecordBuilder, Transport, type RmqOptions } from '@nestjs/microservices';
import { RABBITMQ_START_TIMEOUT_MS, startRabbitMq, type TestRabbitMq } from '../support/rabbitmq-server.js';
import { startRpcApp, tenant, until, type RpcTestApp } from './fixtures/rpc/rpc-app.js';
import { STORE_KINDS, useStoreOptions } from './support/e2e-stores.js';
import { nestClient } from './support/rpc-clients.js';
import { describeRpcTransport, type RpcTestClient } from './support/rpc-scenarios.js';

/**
 * Nest's RabbitMQ transport on a RabbitMQ node of its own: headers are the message properties' headers
 * (`RmqRecordBuilder`); no peer address. A refused event of a `refusedEvents: 'redeliver'` rule, on a queue consumed
 * with `noAck: false`, goes back to the queue and is handled once the window allows; one of a `'reject'` rule is
 * settled (`nack` without requeue), so that the messages behind it still flow.
 */
let broker: TestRabbitMq;
beforeAll(async () => {
  broker = await startRabbitMq();
}, RABBITMQ_START_TIMEOUT_MS);
afterAll(async () => {
  await broker?.stop();
}, RABBITMQ_START_TIMEOUT_MS);

// The client always consumes its replies with noAck (RabbitMQ's direct reply-to allows no other).
const rmq = (queue: string, noAck = true): RmqOptions => ({
  transport: Transport.RMQ,
  options: { urls: [broker.url], queue, queueOptions: { durable: false }, noAck, prefetchCount: 1 },
});

describeRpcTransport({
  name: 'the RabbitMQ transport',
  server: () => rmq('orders'),
  client: () => nestClient(rmq('orders'), (data, headers) => new RmqRecordBuilder(data).setOptions({ headers }).build()),
  peerAddress: false,
});

const storeOptions = useStoreOptions();

describe.each(STORE_KINDS)('refused events on a RabbitMQ queue consumed with noAck: false, on the %s store', (kind) => {
  let t: RpcTestApp;
  let client: RpcTestClient;
  beforeAll(async () => {
    const queue = `orders-acked-${kind}`;
    // One message in flight: a refused message left unacknowledged would hold back every one behind it.
    t = await startRpcApp(rmq(queue, false), storeOptions(kind), { manualAck: true });
    client = await nestClient(rmq(queue));
  });
  afterAll(async () => {
    await client?.close();
    await t?.app.close();
  });

  it("hands a refused event of a 'redeliver' rule back to the queue: the handler sees it once the window allows", async () => {
    const who = tenant();
    const refused = t.refusals.length;
    await client.emit('audit-redelivered', { tenant: who, n: 1 });
    await until('the first event was handled', () => t.events.count('audit-redelivered', who) === 1);
    await client.emit('audit-redelivered', { tenant: who, n: 2 });
    await until('the second event was refused', () => t.refusals.length > refused);
    // Redelivered and refused again while the window lasts (at most a second apart), until the clock passes it.
    await until('the second event was redelivered and refused again', () => t.refusals.length > refused + 1);
    expect(t.events.count('audit-redelivered', who)).toBe(1);
    t.clock.advance(60_000);
    await until('the redelivered event was handled', () => t.events.count('audit-redelivered', who) === 2);
    expect(t.events.seen.filter((e) => e.pattern === 'audit-redelivered').map((e) => (e.data as { n: number }).n)).toEqual([1, 2]);
    expect(t.logs.errors).toEqual([]);
  });

  it("rejects a refused event of a 'reject' rule: it is settled, never handled, and the events behind it still flow", async () => {
    const who = tenant();
    const refused = t.refusals.length;
    await client.emit('audit-rejected', { tenant: who, n: 1 });
    await client.emit('audit-rejected', { tenant: who, n: 2 });
    await until('the second event was refused', () => t.refusals.length > refused);
    t.clock.advance(60_000);
    // With one message in flight, the next is delivered only once the refused one was settled.
    await client.emit('audit-rejected', { tenant: who, n: 3 });
    await until('the third event was handled', () => t.events.count('audit-rejected', who) === 2);
    expect(t.events.seen.filter((e) => (e.data as { tenant: string }).tenant === who).map((e) => (e.data as { n: number }).n)).toEqual([1, 3]);
    expect(t.refusals.slice(refused)).toEqual(['audit-rejected']);
  });
});
