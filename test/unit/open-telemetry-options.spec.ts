import { MeterProvider } from '@opentelemetry/sdk-metrics';
import { validateModuleOptions } from '../../lib/config/module-options.validator.js';
import { RateLimitConfigError } from '../../lib/index.js';
import { loadOpenTelemetry } from '../../lib/observability/open-telemetry.loader.js';

describe('the openTelemetry option', () => {
  const meter = new MeterProvider().getMeter('test');

  it('is off when left out or false', () => {
    expect(validateModuleOptions({}).openTelemetry).toBeUndefined();
    expect(validateModuleOptions({ openTelemetry: false }).openTelemetry).toBeUndefined();
  });

  it('turns on metrics on the global meter and span attributes with true', () => {
    expect(validateModuleOptions({ openTelemetry: true }).openTelemetry).toEqual({ spanAttributes: true });
  });

  it('takes a meter, or false for span attributes only, and spanAttributes false for metrics only', () => {
    expect(validateModuleOptions({ openTelemetry: { meter } }).openTelemetry).toEqual({ meter, spanAttributes: true });
    expect(validateModuleOptions({ openTelemetry: { meter: false } }).openTelemetry).toEqual({ meter: false, spanAttributes: true });
    expect(validateModuleOptions({ openTelemetry: { spanAttributes: false } }).openTelemetry).toEqual({ spanAttributes: false });
  });

  it.each([
    ['yes', 'openTelemetry', 'true, false or { meter?, spanAttributes? }'],
    [{ tracer: {} }, 'openTelemetry.tracer', 'one of meter, spanAttributes'],
    [{ meter: {} }, 'openTelemetry.meter', 'false or an OpenTelemetry Meter'],
    [{ spanAttributes: 'on' }, 'openTelemetry.spanAttributes', 'true or false'],
    [{ meter: false, spanAttributes: false }, 'openTelemetry', 'metrics or span attributes'],
  ])('refuses %j at start-up naming %s and what it takes', (openTelemetry, field, expected) => {
    expect(() => validateModuleOptions({ openTelemetry } as never)).toThrow(expect.objectContaining({ name: 'RateLimitConfigError', field, message: expect.stringContaining(expected) }));
  });
});

describe('loading @opentelemetry/api', () => {
  it('loads nothing when the option is off', async () => {
    expect(await loadOpenTelemetry(undefined, undefined, 'a-package-that-is-not-installed')).toBeNull();
  });

  it('stops the start-up naming the package and how to install it when it is not installed', async () => {
    const loading = loadOpenTelemetry({ spanAttributes: true }, true, '@opentelemetry/not-installed-api');
    await expect(loading).rejects.toThrow(RateLimitConfigError);
    await expect(loading).rejects.toThrow('Invalid rate limit option "openTelemetry": true (expected false or left out: @opentelemetry/not-installed-api is not installed (npm install @opentelemetry/not-installed-api; it is an optional peer dependency))');
  });

  it('makes only what is asked: metrics without span attributes, span attributes without metrics', async () => {
    const metricsOnly = await loadOpenTelemetry({ meter: new MeterProvider().getMeter('a'), spanAttributes: false }, {});
    const spansOnly = await loadOpenTelemetry({ meter: false, spanAttributes: true }, {});
    expect([metricsOnly?.metrics !== undefined, metricsOnly?.spans !== undefined]).toEqual([true, false]);
    expect([spansOnly?.metrics !== undefined, spansOnly?.spans !== undefined]).toEqual([false, true]);
  });
});
