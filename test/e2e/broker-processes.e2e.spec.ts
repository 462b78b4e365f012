import amqp from 'amqplib';
import { connectAsync } from 'mqtt';
import { connect as connectNats, StringCodec } from 'nats';
import { createServer } from 'node:net';
import { startMosquitto, type TestMosquitto } from '../support/mosquitto.js';
import { startNatsServer, type TestNats } from '../support/nats-server.js';
import { RABBITMQ_START_TIMEOUT_MS, startRabbitMq, type TestRabbitMq } from '../support/rabbitmq-server.js';

/** True when nothing listens on 127.0.0.1:`port` any more (we can bind it ourselves). */
function isFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

describe('a private nats-server', () => {
  let broker: TestNats;
  beforeAll(async () => {
    broker = await startNatsServer();
  });
  afterAll(() => broker?.stop());

  it('listens on its own port, not the machine’s 4222', () => {
    expect(broker.port).not.toBe(4222);
    expect(broker.url).toBe(`nats://127.0.0.1:${broker.port}`);
  });

  it('delivers a message from a publisher to a subscriber', async () => {
    const client = await connectNats({ servers: broker.url });
    const codec = StringCodec();
    const subscription = client.subscribe('smoke', { max: 1 });
    await client.flush(); // the subscription is registered before we publish
    client.publish('smoke', codec.encode('hello'));
    const received: string[] = [];
    for await (const message of subscription) received.push(codec.decode(message.data));
    await client.close();
    expect(received).toEqual(['hello']);
  });

  it('frees its port when stopped', async () => {
    await broker.stop();
    expect(await isFree(broker.port)).toBe(true);
  });
});

describe('a private mosquitto', () => {
  let broker: TestMosquitto;
  beforeAll(async () => {
    broker = await startMosquitto();
  });
  afterAll(() => broker?.stop());

  it('listens on its own port, not the machine’s 1883', () => {
    expect(broker.port).not.toBe(1883);
    expect(broker.url).toBe(`mqtt://127.0.0.1:${broker.port}`);
  });

  it('delivers a message from a publisher to a subscriber', async () => {
    const client = await connectAsync(broker.url, { reconnectPeriod: 0 });
    const received = new Promise<string>((resolve) => client.once('message', (_topic, payload) => resolve(payload.toString())));
    await client.subscribeAsync('smoke', { qos: 1 });
    await client.publishAsync('smoke', 'hello', { qos: 1 });
    const message = await received;
    await client.endAsync();
    expect(message).toBe('hello');
  });

  it('frees its port when stopped', async () => {
    await broker.stop();
    expect(await isFree(broker.port)).toBe(true);
  });
});

describe('a private RabbitMQ node', () => {
  let broker: TestRabbitMq;
  beforeAll(async () => {
    broker = await startRabbitMq();
  }, RABBITMQ_START_TIMEOUT_MS);
  afterAll(() => broker?.stop(), RABBITMQ_START_TIMEOUT_MS);

  it('listens on its own ports and name, not the machine’s 5672 and rabbit@localhost', () => {
    expect(broker.port).not.toBe(5672);
    expect(broker.distPort).not.toBe(25672);
    expect(broker.node).toMatch(/^rabbit-test-\d+-\d+@localhost$/);
    expect(broker.url).toBe(`amqp://guest:guest@127.0.0.1:${broker.port}`);
  });

  it('delivers a message from a publisher to a consumer', async () => {
    const connection = await amqp.connect(broker.url);
    const channel = await connection.createChannel();
    const { queue } = await channel.assertQueue('', { exclusive: true });
    const received = new Promise<string>((resolve) => {
      void channel.consume(queue, (message) => resolve(message!.content.toString()), { noAck: true });
    });
    channel.sendToQueue(queue, Buffer.from('hello'));
    const message = await received;
    await connection.close();
    expect(message).toBe('hello');
  });

  it(
    'frees its ports when stopped',
    async () => {
      await broker.stop();
      expect(await isFree(broker.port)).toBe(true);
      expect(await isFree(broker.distPort)).toBe(true);
    },
    RABBITMQ_START_TIMEOUT_MS,
  );
});
