import { MqttRecordBuilder, Transport } from '@nestjs/microservices';
import { startMosquitto, type TestMosquitto } from '../support/mosquitto.js';
import { nestClient } from './support/rpc-clients.js';
import { describeRpcTransport } from './support/rpc-scenarios.js';

/** Nest's MQTT transport (MQTT 5) on a Mosquitto of its own: headers are the packet's user properties (`MqttRecordBuilder`); no peer address. */
let broker: TestMosquitto;
beforeAll(async () => {
  broker = await startMosquitto();
});
afterAll(async () => {
  await broker?.stop();
});

const options = () => ({ url: broker.url, protocolVersion: 5 as const });

describeRpcTransport({
  name: 'the MQTT transport',
  server: () => ({ transport: Transport.MQTT, options: options() }),
  client: () =>
    nestClient({ transport: Transport.MQTT, options: options() }, (data, userProperties) => new MqttRecordBuilder(data).setProperties({ userProperties }).build()),
  peerAddress: false,
});
