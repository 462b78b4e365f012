import { headers as natsHeaders } from '@nats-io/transport-node';
import { NatsRecordBuilder, Transport } from '@nestjs/microservices';
import { startNatsServer, type TestNats } from '../support/nats-server.js';
import { nestClient } from './support/rpc-clients.js';
import { describeRpcTransport } from './support/rpc-scenarios.js';

/** Nest's NATS transport on a nats-server of its own: headers are the NATS message headers (`NatsRecordBuilder`); no peer address. */
let broker: TestNats;
beforeAll(async () => {
  broker = await startNatsServer();
});
afterAll(async () => {
  await broker?.stop();
});

function natsRecord(data: object, values: Record<string, string>) {
  const hdrs = natsHeaders();
  for (const [name, value] of Object.entries(values)) hdrs.set(name, value);
  return new NatsRecordBuilder(data).setHeaders(hdrs).build();
}

describeRpcTransport({
  name: 'the NATS transport',
  server: () => ({ transport: Transport.NATS, options: { servers: [broker.url] } }),
  client: () => nestClient({ transport: Transport.NATS, options: { servers: [broker.url] } }, natsRecord),
  peerAddress: false,
});
