/**
 * The `grpc-status-details-bin` trailer of a RESOURCE_EXHAUSTED answer: a `google.rpc.Status` carrying a
 * `google.rpc.RetryInfo`, the form gRPC clients (and Google's API guidelines) read a server's "retry after" from.
 * Encoded by hand (a few protobuf fields) so that no protobuf library is needed:
 *   Status { int32 code = 1; string message = 2; repeated google.protobuf.Any details = 3; }
 *   Any { string type_url = 1; bytes value = 2; }   RetryInfo { google.protobuf.Duration retry_delay = 1; }
 *   Duration { int64 seconds = 1; int32 nanos = 2; }
 */
export function retryInfoStatus(code: number, message: string, retryAfterMs: number): Buffer {
  const wait = Math.max(0, Math.ceil(retryAfterMs));
  const duration = Buffer.concat([varintField(1, Math.floor(wait / 1000)), varintField(2, (wait % 1000) * 1_000_000)]);
  const retryInfo = bytesField(1, duration);
  const any = Buffer.concat([bytesField(1, Buffer.from(RETRY_INFO_TYPE)), bytesField(2, retryInfo)]);
  return Buffer.concat([varintField(1, code), bytesField(2, Buffer.from(message)), bytesField(3, any)]);
}

export const RETRY_INFO_TYPE = 'type.googleapis.com/google.rpc.RetryInfo';

/** A field of wire type 0; proto3 leaves out a zero. */
function varintField(field: number, value: number): Buffer {
  return value === 0 ? Buffer.alloc(0) : Buffer.concat([varint(field << 3), varint(value)]);
}

/** A field of wire type 2 (length-delimited). */
function bytesField(field: number, value: Buffer): Buffer {
  return Buffer.concat([varint((field << 3) | 2), varint(value.length), value]);
}

/** A non-negative integer as a protobuf varint (7 bits a byte, low first). */
function varint(value: number): Buffer {
  const bytes: number[] = [];
  let rest = value;
  while (rest >= 0x80) {
    bytes.push((rest % 0x80) | 0x80);
    rest = Math.floor(rest / 0x80);
  }
  bytes.push(rest);
  return Buffer.from(bytes);
}
