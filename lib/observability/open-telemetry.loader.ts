import type { RateLimitMetrics } from '../interfaces/metrics.interface.js';
import type { RateLimitOpenTelemetrySettings } from '../interfaces/open-telemetry.interface.js';
import { RateLimitConfigError } from '../rules/rate-limit-config.error.js';
import { DecisionSpans } from './decision.spans.js';
import { openTelemetryMetrics } from './open-telemetry.metrics.js';

type OpenTelemetryApi = typeof import('@opentelemetry/api');

/** What the `openTelemetry` option turns on: the metrics, the span attributes, or both. */
export interface OpenTelemetryParts {
  readonly metrics?: RateLimitMetrics;
  readonly spans?: DecisionSpans;
}

export const OPEN_TELEMETRY_API = '@opentelemetry/api';
/** The instrumentation scope of the metrics made on the global MeterProvider. */
export const METER_NAME = 'nestjs-redis-rate-limit';

/**
 * Loads `@opentelemetry/api` when the option is on (only then: it is an optional peer dependency) and makes the
 * instruments, once. Without the package the start-up stops, naming it. `option`: what the user wrote, for the
 * error; `api`: the package to load (tests name one that is not installed).
 */
export async function loadOpenTelemetry(settings: RateLimitOpenTelemetrySettings | undefined, option: unknown, api = OPEN_TELEMETRY_API): Promise<OpenTelemetryParts | null> {
  if (!settings) return null;
  let otel: OpenTelemetryApi;
  try {
    const loaded = (await import(api)) as OpenTelemetryApi & { default?: OpenTelemetryApi };
    otel = loaded.default ?? loaded;
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code !== 'ERR_MODULE_NOT_FOUND' && code !== 'MODULE_NOT_FOUND') throw error;
    throw new RateLimitConfigError('openTelemetry', option, `false or left out: ${api} is not installed (npm install ${api}; it is an optional peer dependency)`);
  }
  const meter = settings.meter === undefined ? otel.metrics.getMeter(METER_NAME) : settings.meter;
  return {
    ...(meter ? { metrics: openTelemetryMetrics(meter) } : {}),
    ...(settings.spanAttributes ? { spans: new DecisionSpans(otel.trace) } : {}),
  };
}
