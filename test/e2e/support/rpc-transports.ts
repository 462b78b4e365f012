import { Transport, type MicroserviceOptions } from '@nestjs/microservices';
import { startNatsServer, type TestNats } from '../../support/nats-server.js';
import { freePort } from '../../support/redis-server.js';
import { nestClient } from './rpc-clients.js';
import type { RpcTestClient } from './rpc-scenarios.js';

export type QuickTransport = 'TCP' | 'NATS';
export const QUICK_TRANSPORTS: QuickTransport[] = ['TCP', 'NATS'];

/**
 * The transports quickest to start, for suites that run their scenarios over a direct socket and one broker: TCP
 * on a free port, and NATS on a nats-server of the file's own (started before its tests, stopped after them).
 */
export function useQuickTransports(): (transport: QuickTransport) => { server(): MicroserviceOptions; client(): Promise<RpcTestClient> } {
  let port = 0;
  let nats: TestNats | undefined;
  beforeAll(async () => {
    port = await freePort();
    nats = await startNatsServer();
  });
  afterAll(async () => {
    await nats?.stop();
  });
  return (transport) => {
    if (transport === 'TCP') {
      const options = { transport: Transport.TCP as const, options: { host: '127.0.0.1', port } };
      return { server: () => options, client: () => nestClient(options) };
    }
    const options = { transport: Transport.NATS as const, options: { servers: [nats!.url] } };
    return { server: () => options, client: () => nestClient(options) };
  };
}
