import { RateLimitConfigError } from './rate-limit-config.error.js';
import type { Duration } from '../interfaces/rule.interface.js';

const SECOND = 1_000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** The units the `ms` package reads, with its values (a year is 365.25 days there, so it is here). */
const UNIT_MS: Record<string, number> = {
  years: DAY * 365.25, year: DAY * 365.25, yrs: DAY * 365.25, yr: DAY * 365.25, y: DAY * 365.25,
  weeks: DAY * 7, week: DAY * 7, w: DAY * 7,
  days: DAY, day: DAY, d: DAY,
  hours: HOUR, hour: HOUR, hrs: HOUR, hr: HOUR, h: HOUR,
  minutes: MINUTE, minute: MINUTE, mins: MINUTE, min: MINUTE, m: MINUTE,
  seconds: SECOND, second: SECOND, secs: SECOND, sec: SECOND, s: SECOND,
  milliseconds: 1, millisecond: 1, msecs: 1, msec: 1, ms: 1,
};
// The `ms` package's grammar (a number, optional spaces, a unit; any case), with the unit required: '60'
// alone is ambiguous (60 ms or 60 s?) and was a silent 60 ms before.
const DURATION = /^(-?(?:\d+)?\.?\d+) *([a-z]+)?$/i;
const EXAMPLES = '"500ms", "10s", "1m", "2 hours", "1d", "1w"';

/**
 * Parses a duration into whole milliseconds: a number (milliseconds) or a string with a unit, in any form the
 * `ms` package reads (`'500ms'`, `'10s'`, `'1.5m'`, `'1min'`, `'2 hours'`, `'1d'`, `'1w'`, `'1y'`). A string
 * without a unit is refused (`'60'`: 60 s or 60 ms?), and so is anything else, naming `field` and the value.
 */
export function parseDuration(value: Duration | undefined, field = 'duration', options: { allowZero?: boolean } = {}): number {
  const expected = options.allowZero ? `a duration of 0 or more: milliseconds as a number, or a string with a unit such as ${EXAMPLES}` : `a positive duration: milliseconds as a number, or a string with a unit such as ${EXAMPLES}`;
  let ms: number;
  if (typeof value === 'number') {
    ms = value;
  } else if (typeof value === 'string') {
    const text = value.trim();
    // "0" needs no unit: zero of anything is zero (a lockout turned off from an env var).
    if (options.allowZero && /^0+$/.test(text)) return 0;
    const match = text.length <= 100 ? DURATION.exec(text) : null;
    if (match && match[2] === undefined) {
      throw new RateLimitConfigError(field, value, `a unit: "${match[1]}s" for seconds or "${match[1]}ms" for milliseconds (a number, not a string, is read as milliseconds)`);
    }
    const unit = match ? UNIT_MS[match[2].toLowerCase()] : undefined;
    if (!match || unit === undefined) throw new RateLimitConfigError(field, value, expected);
    ms = Number(match[1]) * unit;
  } else {
    throw new RateLimitConfigError(field, value, expected);
  }
  if (!Number.isFinite(ms) || ms < 0 || (ms === 0 && !options.allowZero)) throw new RateLimitConfigError(field, value, expected);
  if (!Number.isInteger(ms)) throw new RateLimitConfigError(field, value, `${expected}, in whole milliseconds (it is ${ms} ms)`);
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
