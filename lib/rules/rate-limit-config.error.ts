/** Thrown when an option or a rule is invalid; the message names the field and the value received. */
export class RateLimitConfigError extends Error {
  constructor(
    /** Dotted path of the offending field, e.g. `rules.login.limit`. */
    readonly field: string,
    readonly value: unknown,
    expected: string,
  ) {
    super(`Invalid rate limit option "${field}": ${describe(value)} (expected ${expected})`);
    this.name = 'RateLimitConfigError';
  }
}

function describe(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (value === undefined || value === null || typeof value === 'number' || typeof value === 'boolean') {
    return String(value);
  }
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return Object.prototype.toString.call(value);
  }
}
