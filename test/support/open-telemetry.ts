import { context, metrics, trace, type Attributes, type AttributeValue, type Meter, type Tracer } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { AggregationTemporality, InMemoryMetricExporter, MeterProvider, PeriodicExportingMetricReader, type MetricData } from '@opentelemetry/sdk-metrics';
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider, type ReadableSpan } from '@opentelemetry/sdk-trace';

/** The OpenTelemetry SDK with in-memory exporters, as an app would register it, for one test file. */
export interface TestTelemetry {
  /** A meter of this file's MeterProvider (also the global one): pass it, or let the module take the global one. */
  readonly meter: Meter;
  readonly tracer: Tracer;
  /** Runs `fn` in a new active span, ended when `fn` settles; resolves to `fn`'s result. */
  inSpan<T>(name: string, fn: () => Promise<T>): Promise<T>;
  /** The spans ended so far, in order. */
  spans(): ReadableSpan[];
  /** Every `ratelimit.*` attribute of the ended span named `name` (the last one of that name). */
  rateLimitAttributes(name: string): Attributes;
  /** The metrics collected now (cumulative). */
  collect(): Promise<MetricData[]>;
  /** One metric's data point values by their attributes, collected now: sums, gauges, or histogram counts. */
  points(name: string): Promise<{ attributes: Attributes; value: number; sum?: number }[]>;
  /** Forgets the spans ended so far. */
  resetSpans(): void;
  shutdown(): Promise<void>;
}

/**
 * Registers a MeterProvider (collected on demand: its periodic export never fires in a test), a TracerProvider and
 * an AsyncLocalStorage context manager as the global ones; `shutdown()` takes them off and shuts them down.
 */
export function startTelemetry(): TestTelemetry {
  const metricExporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  const reader = new PeriodicExportingMetricReader({ exporter: metricExporter, exportIntervalMillis: 3_600_000 });
  const meterProvider = new MeterProvider({ readers: [reader] });
  const spanExporter = new InMemorySpanExporter();
  const tracerProvider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter: spanExporter })] });
  const contextManager = new AsyncLocalStorageContextManager().enable();
  // A previous file's globals (same worker) are taken off first: the API refuses to replace them.
  metrics.disable();
  trace.disable();
  context.disable();
  metrics.setGlobalMeterProvider(meterProvider);
  trace.setGlobalTracerProvider(tracerProvider);
  context.setGlobalContextManager(contextManager);
  const tracer = trace.getTracer('test');
  const collect = async () => {
    metricExporter.reset();
    await reader.forceFlush();
    return metricExporter.getMetrics().flatMap((r) => r.scopeMetrics.flatMap((s) => s.metrics));
  };
  return {
    meter: meterProvider.getMeter('test'),
    tracer,
    inSpan: (name, fn) =>
      tracer.startActiveSpan(name, async (span) => {
        try {
          return await fn();
        } finally {
          span.end();
        }
      }),
    spans: () => spanExporter.getFinishedSpans(),
    rateLimitAttributes(name) {
      const span = [...spanExporter.getFinishedSpans()].reverse().find((s) => s.name === name);
      if (!span) throw new Error(`no ended span named ${name}`);
      return Object.fromEntries(Object.entries(span.attributes).filter(([key]) => key.startsWith('ratelimit.')));
    },
    collect,
    async points(name) {
      const metric = (await collect()).find((m) => m.descriptor.name === name);
      return (metric?.dataPoints ?? []).map((p) => {
        const value = p.value as number | { count: number; sum?: number };
        return typeof value === 'number' ? { attributes: p.attributes, value } : { attributes: p.attributes, value: value.count, sum: value.sum };
      });
    },
    resetSpans: () => spanExporter.reset(),
    async shutdown() {
      metrics.disable();
      trace.disable();
      context.disable();
      await meterProvider.shutdown();
      await tracerProvider.shutdown();
    },
  };
}

/** Every attribute value of the spans and metric points given, as text: what a key or an IP must never be in. */
export function attributeTexts(spans: readonly ReadableSpan[], metricData: readonly MetricData[]): string[] {
  const text = (v: AttributeValue | undefined) => (Array.isArray(v) ? v.join(',') : String(v));
  return [
    ...spans.flatMap((s) => Object.entries(s.attributes).map(([k, v]) => `${k}=${text(v)}`)),
    ...metricData.flatMap((m) => m.dataPoints.flatMap((p) => Object.entries(p.attributes).map(([k, v]) => `${k}=${text(v)}`))),
  ];
}
