import { Transport } from '@nestjs/microservices';
import { startRedis, type TestRedis } from '../support/redis-server.js';
import { nestClient } from './support/rpc-clients.js';
import { describeRpcTransport } from './support/rpc-scenarios.js';

/**
 * Nest's Redis transport (pub/sub on a redis-server of its own, apart from the store's): headers are the packet
 * metadata a client sets with `setOnDispatchHook`; no peer address (`key: 'ip'` has no tracker).
 */
let broker: TestRedis;
beforeAll(async () => {
  broker = await startRedis({ own: true });
});
afterAll(async () => {
  await broker?.stop();
});

const options = () => ({ host: '127.0.0.1', port: broker.port });

describeRpcTransport({
  name: 'the Redis transport',
  server: () => ({ transport: Transport.REDIS, options: options() }),
  client: () => nestClient({ transport: Transport.REDIS, options: options() }),
  peerAddress: false,
});
