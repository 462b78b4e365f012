import { BadRequestException, Injectable, type PipeTransform } from '@nestjs/common';

export interface SmsRequest {
  /** E.164, e.g. `+14155550123`. */
  phone: string;
  /** Demo switch: make the stub provider fail this one send. */
  simulateFailure: boolean;
}

/**
 * E.164: `+`, a country code that does not start with 0, at most 15 digits, nothing else. Only the canonical
 * form is accepted, so `+1 415 555 0123` cannot get a budget of its own next to `+14155550123`.
 */
const E164 = /^\+[1-9]\d{6,14}$/;

/** Validates the body before any rate-limit key is touched: a malformed number costs nothing and counts nowhere. */
@Injectable()
export class SmsRequestPipe implements PipeTransform<unknown, SmsRequest> {
  transform(body: unknown): SmsRequest {
    const { phone, simulateFailure = false } = (body ?? {}) as Record<string, unknown>;
    if (typeof phone !== 'string' || !E164.test(phone)) {
      throw new BadRequestException('phone must be an E.164 number such as +14155550123');
    }
    if (typeof simulateFailure !== 'boolean') throw new BadRequestException('simulateFailure must be true or false');
    return { phone, simulateFailure };
  }
}
