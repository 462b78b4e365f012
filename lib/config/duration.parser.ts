import { RateLimitConfigError } from './rate-limit-config.error.js';
import type { Duration } from '../interfaces/rule.interface.js';

const UNIT_MS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };
const DURATION = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$/;

/**
 * Parses a duration into whole milliseconds: a number (ms), a numeric string (ms, as env vars arrive) or a
 * string with a unit (`'500ms'`, `'10s'`, `'1.5m'`, `'1h'`, `'1d'`). Anything else is refused, naming `field`.
 */
export function parseDuration(value: Duration | undefined, field: string, options: { allowZero?: boolean } = {}): number {
  const expected = options.allowZero
    ? 'a duration of 0 or more: milliseconds, or a string such as "500ms", "10s", "1m", "1h", "1d"'
    : 'a positive duration: milliseconds, or a string such as "500ms", "10s", "1m", "1h", "1d"';
  let ms: number;
  if (typeof value === 'number') {
    ms = value;
  } else if (typeof value === 'string') {
    const match = DURATION.exec(value);
    if (!match) throw new RateLimitConfigError(field, value, expected);
    ms = Number(match[1]) * UNIT_MS[match[2] ?? 'ms'];
  } else {
    throw new RateLimitConfigError(field, value, expected);
  }
  if (!Number.isFinite(ms) || !Number.isInteger(ms) || ms < 0 || (ms === 0 && !options.allowZero)) {
    throw new RateLimitConfigError(field, value, `${expected}, in whole milliseconds`);
  }
  return ms;
}

/** Parses a positive integer given as a number or a decimal string (as env vars arrive); refuses `"abc"`, `-5`, `1.5`. */
export function parseInteger(value: unknown, field: string, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const n = typeof value === 'string' && /^\s*-?\d+\s*$/.test(value) ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < min || n > max) {
    const range = max === Number.MAX_SAFE_INTEGER ? `of ${min} or more` : `between ${min} and ${max}`;
    throw new RateLimitConfigError(field, value, `an integer ${range}`);
  }
  return n;
}
