import { Transport } from '@nestjs/microservices';
import { freePort } from '../support/redis-server.js';
import { nestClient } from './support/rpc-clients.js';
import { describeRpcTransport } from './support/rpc-scenarios.js';

/** Nest's TCP transport: headers are the packet metadata a client sets with `setOnDispatchHook`; `ip` is the socket's peer. */
let port = 0;
beforeAll(async () => {
  port = await freePort();
});

describeRpcTransport({
  name: 'the TCP transport',
  server: () => ({ transport: Transport.TCP, options: { host: '127.0.0.1', port } }),
  client: () => nestClient({ transport: Transport.TCP, options: { host: '127.0.0.1', port } }),
  peerAddress: true,
});
