import type { RedisClientPort } from './clients/redis-client.port.js';

/** Replies that retrying cannot fix: credentials, ACL permissions, a database index the server does not have. */
const PERMANENT = /^(WRONGPASS|NOAUTH|NOPERM)\b|ERR DB index is out of range|invalid password|invalid username-password/i;

/** Whether `error` is one a reconnect cannot fix, so that the app must not wait for it to pass. */
export function isPermanentRedisError(error: unknown): error is Error {
  return error instanceof Error && PERMANENT.test(error.message);
}

// What a command says when the connection is down, whatever brought it down.
const GENERIC = /Connection is closed|Stream isn't writeable|enableOfflineQueue/;

/**
 * The errors a client the module created reported ('error' events: refused connections, a failed AUTH or
 * SELECT). Its failed commands only say "Connection is closed": this keeps the reason they hide.
 */
export class RedisConnectionErrors {
  /** The last error the client reported; undefined until it reports one. */
  last?: Error;
  /** Errors reported since `collect()`; undefined when not collecting. */
  private collected?: Error[];

  constructor(client: RedisClientPort) {
    const record = (error: Error) => {
      this.last = error;
      this.collected?.push(error);
    };
    client.on('error', record);
    // A Cluster's own error only says it could not refresh its slots; each node's says why (WRONGPASS...).
    if (client.isCluster) client.on('node error', record);
  }

  /** Starts keeping every error reported from now on (at start-up, to find the one a failed connect hides). */
  collect(): Error[] {
    return (this.collected = []);
  }

  stopCollecting(): void {
    this.collected = undefined;
  }

  /** A command's error, with the connection's own reason added when the command's message hides it. */
  explain(error: Error): string {
    const last = this.last;
    if (!last || !GENERIC.test(error.message) || last.message === error.message) return error.message;
    return `${error.message} (the connection's last error: ${last.message})`;
  }
}
