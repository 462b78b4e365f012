import type { RedisClientPort } from '../stores/redis/clients/redis-client.port.js';

/** One refusal as written to the audit stream. */
export interface RejectionRecord {
  rule: string;
  key: string;
  retryAfterMs: number;
  degraded?: string;
  /** A shadow rule's refusal: the request was admitted (written as the field `shadow` = `'true'`). */
  shadow?: boolean;
}

/**
 * An audit trail of refusals in a capped Redis Stream: who, by which rule, how long to wait; when is the entry
 * ID, taken from Redis's clock alone. Written in the background: a failing write is reported, never waited for.
 */
export class RejectionAudit {
  constructor(
    private readonly client: RedisClientPort,
    private readonly streamKey: string,
    private readonly maxLen: number,
    private readonly onError: (error: Error) => void,
  ) {}

  record(entry: RejectionRecord): void {
    const fields = ['rule', entry.rule, 'key', entry.key, 'retryAfterMs', String(entry.retryAfterMs)];
    if (entry.degraded) fields.push('degraded', entry.degraded);
    if (entry.shadow) fields.push('shadow', 'true');
    this.append(fields);
  }

  /** Appends an entry of other events (field, value, ...: an override's change has `event`), in the background too. */
  append(fields: readonly string[]): void {
    this.client.xadd(this.streamKey, ['MAXLEN', '~', String(this.maxLen), '*', ...fields]).catch((error: Error) => this.onError(error));
  }
}
