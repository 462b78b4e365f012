/*
 * The parts of @opentelemetry/api the module uses, written out: its declarations then never name the package, so an
 * app without it compiles (even with skipLibCheck off). A Meter, a TraceAPI and a Span of any 1.x API are these.
 */

/** Attributes as OpenTelemetry takes them. */
export type OpenTelemetryAttributes = Record<string, string | number | boolean | string[] | undefined>;

interface InstrumentOptions {
  description?: string;
  unit?: string;
  advice?: { explicitBucketBoundaries?: number[] };
}

/** An asynchronous instrument: read by its callbacks when the reader collects. */
interface ObservableInstrument {
  addCallback(callback: (result: { observe(value: number, attributes?: OpenTelemetryAttributes): void }) => void): void;
}

/** What the module needs of `@opentelemetry/api`'s `Meter`. */
export interface OpenTelemetryMeter {
  createCounter(name: string, options?: InstrumentOptions): { add(value: number, attributes?: OpenTelemetryAttributes): void };
  createHistogram(name: string, options?: InstrumentOptions): { record(value: number, attributes?: OpenTelemetryAttributes): void };
  createObservableCounter(name: string, options?: InstrumentOptions): ObservableInstrument;
  createObservableGauge(name: string, options?: InstrumentOptions): ObservableInstrument;
}

/** What the module needs of `@opentelemetry/api`'s `trace`. */
export interface OpenTelemetryTrace {
  getActiveSpan(): { isRecording(): boolean; setAttributes(attributes: OpenTelemetryAttributes): unknown } | undefined;
}

/** What `openTelemetry: { ... }` takes; `openTelemetry: true` is `{}`. */
export interface RateLimitOpenTelemetryOptions {
  /**
   * The Meter the decision metrics are made on, once at start-up (`metrics.getMeter(...)` of `@opentelemetry/api`);
   * `false`: no metrics, span attributes only.
   * @default the global MeterProvider's meter `'nestjs-redis-rate-limit'` (register the SDK before the app is created)
   */
  meter?: OpenTelemetryMeter | false;
  /**
   * Set the decision as `ratelimit.*` attributes on the span active when it is made (never the key or the IP);
   * a span that is not recording (sampled out) is left alone.
   * @default true
   */
  spanAttributes?: boolean;
}

/** The validated `openTelemetry` option. */
export interface RateLimitOpenTelemetrySettings {
  /** undefined: the global MeterProvider's meter; false: no metrics. */
  readonly meter?: OpenTelemetryMeter | false;
  readonly spanAttributes: boolean;
}
