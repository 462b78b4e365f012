import { Injectable, type PipeTransform } from '@nestjs/common';
import type { Duration, RateLimitAlgorithm } from 'nestjs-redis-rate-limit';
import { fieldError } from './field-error.js';

/** What the admin API may change in a rule; the values are checked by the library (`RateLimitPolicies.setRule`). */
export interface RulePatch {
  limit?: number | string;
  window?: Duration;
  algorithm?: RateLimitAlgorithm;
}

const PATCHABLE = new Set(['limit', 'window', 'algorithm']);

/** Only the shape here (an object of known fields); whether the values make a valid rule is the library's call. */
@Injectable()
export class RulePatchPipe implements PipeTransform<unknown, RulePatch> {
  transform(body: unknown): RulePatch {
    if (body === null || typeof body !== 'object' || Array.isArray(body)) throw fieldError('body', 'The body must be a JSON object');
    const fields = Object.keys(body);
    const unknown = fields.find((f) => !PATCHABLE.has(f));
    if (unknown !== undefined) throw fieldError(unknown, `"${unknown}" cannot be changed here; only limit, window and algorithm can`);
    if (fields.length === 0) throw fieldError('body', 'Give at least one of limit, window, algorithm');
    return body as RulePatch;
  }
}
