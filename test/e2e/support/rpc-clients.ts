import { ClientProxyFactory, type ClientOptions, type ClientProxy } from '@nestjs/microservices';
import { firstValueFrom, lastValueFrom, toArray } from 'rxjs';
import type { RpcTestClient } from './rpc-scenarios.js';

/**
 * A Nest client whose headers travel as packet metadata (TCP, Redis: `setOnDispatchHook`), or through `record`,
 * which wraps the payload in the transport's record with the headers (NATS, MQTT, RabbitMQ).
 */
export async function nestClient(options: ClientOptions, record?: (data: object, headers: Record<string, string>) => unknown): Promise<RpcTestClient> {
  const proxy: ClientProxy = ClientProxyFactory.create(options);
  await proxy.connect();
  // Read by the dispatch hook of the next packet: the scenarios send one message at a time.
  let next: Record<string, string> | undefined;
  if (!record) proxy.setOnDispatchHook((packet) => Object.assign(packet, next ? { metadata: next } : {}));
  return {
    send: (pattern, data, headers) => {
      next = headers;
      const payload = record && headers ? record(data, headers) : data;
      return firstValueFrom(proxy.send(pattern, payload));
    },
    sendAll: (pattern, data) => {
      next = undefined;
      return lastValueFrom(proxy.send(pattern, data).pipe(toArray()));
    },
    emit: async (pattern, data) => {
      next = undefined;
      await firstValueFrom(proxy.emit(pattern, data), { defaultValue: undefined });
    },
    close: () => proxy.close(),
  };
}
