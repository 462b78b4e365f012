import type { RateLimitOpenTelemetryOptions, RateLimitOpenTelemetrySettings } from '../interfaces/open-telemetry.interface.js';
import { RateLimitConfigError } from '../rules/rate-limit-config.error.js';

const FIELDS = new Set(['meter', 'spanAttributes']);
const EXPECTED = 'true, false or { meter?, spanAttributes? }';

/** The `openTelemetry` option checked at start-up: undefined when it is off (absent or false). */
export function openTelemetrySettings(option: boolean | RateLimitOpenTelemetryOptions | undefined): RateLimitOpenTelemetrySettings | undefined {
  if (option === undefined || option === false) return undefined;
  if (option === true) return { spanAttributes: true };
  if (option === null || typeof option !== 'object' || Array.isArray(option)) throw new RateLimitConfigError('openTelemetry', option, EXPECTED);
  for (const field of Object.keys(option)) {
    if (!FIELDS.has(field)) throw new RateLimitConfigError(`openTelemetry.${field}`, (option as Record<string, unknown>)[field], `one of ${[...FIELDS].join(', ')}`);
  }
  const { meter, spanAttributes = true } = option;
  // A Meter is an interface: any object that makes the three kinds of instrument the metrics use will do.
  const isMeter = (m: unknown) => ['createCounter', 'createHistogram', 'createObservableCounter', 'createObservableGauge'].every((f) => typeof (m as Record<string, unknown>)?.[f] === 'function');
  if (meter !== undefined && meter !== false && !isMeter(meter)) {
    throw new RateLimitConfigError('openTelemetry.meter', meter, 'false or an OpenTelemetry Meter (metrics.getMeter(...) of @opentelemetry/api)');
  }
  if (typeof spanAttributes !== 'boolean') throw new RateLimitConfigError('openTelemetry.spanAttributes', spanAttributes, 'true or false');
  if (meter === false && !spanAttributes) throw new RateLimitConfigError('openTelemetry', option, 'metrics or span attributes: leave out openTelemetry to turn both off');
  return meter === undefined ? { spanAttributes } : { meter, spanAttributes };
}
