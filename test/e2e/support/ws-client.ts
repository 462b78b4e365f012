import { WebSocket, type ClientOptions } from 'ws';

export interface WsMessage {
  event: string;
  data: unknown;
}

/**
 * A `ws` client of a platform-ws gateway, reading what the gateway sends in order of arrival. `options` are the
 * socket's own: `localAddress` to choose the client's address, `headers` for the upgrade request.
 */
export class WsClient {
  private readonly inbox: WsMessage[] = [];
  private readonly waiting: ((message: WsMessage) => void)[] = [];

  private constructor(readonly socket: WebSocket) {
    socket.on('message', (raw) => {
      const message = JSON.parse(raw.toString()) as WsMessage;
      const waiter = this.waiting.shift();
      if (waiter) waiter(message);
      else this.inbox.push(message);
    });
  }

  static async connect(port: number, options: ClientOptions): Promise<WsClient> {
    const socket = new WebSocket(`ws://127.0.0.1:${port}/`, options);
    await new Promise<void>((resolve, reject) => {
      socket.once('open', () => resolve());
      socket.once('error', reject);
    });
    return new WsClient(socket);
  }

  send(event: string, data: unknown): void {
    this.socket.send(JSON.stringify({ event, data }));
  }

  /** The next message the gateway sends (already received, or the next to arrive). */
  next(): Promise<WsMessage> {
    return this.inbox.length > 0 ? Promise.resolve(this.inbox.shift()!) : new Promise<WsMessage>((resolve) => this.waiting.push(resolve));
  }

  /** Sends one message and waits for the next message from the gateway: its answer when nothing else is pending. */
  request(event: string, data: unknown): Promise<WsMessage> {
    const reply = this.next();
    this.send(event, data);
    return reply;
  }

  close(): Promise<void> {
    if (this.socket.readyState === WebSocket.CLOSED) return Promise.resolve();
    return new Promise((resolve) => {
      this.socket.once('close', () => resolve());
      this.socket.close();
    });
  }
}
