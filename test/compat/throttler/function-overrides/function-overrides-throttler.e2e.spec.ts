import type { AbstractHttpAdapter } from '@nestjs/core';
import { ADAPTERS, STORES, useCompatApp, useCompatSetup } from '../utility/compat-setup.js';
import { spec as specAt } from '../utility/expect-response.js';
import { FunctionOverridesThrottlerModule } from './app.module.js';

/** @nestjs/throttler's test/function-overrides/function-overrides-throttler.e2e-spec.ts, its sleeps as clock moves. */
const commonHeader = (prefix: string, name?: string) => `${prefix}${name ? '-' + name : ''}`;

const remainingHeader = (name?: string) => commonHeader('x-ratelimit-remaining', name);
const limitHeader = (name?: string) => commonHeader('x-ratelimit-limit', name);
const retryHeader = (name?: string) => commonHeader('retry-after', name);

const custom = 'custom';
const compat = useCompatSetup();

describe.each(ADAPTERS)('Function-Overrides-Throttler Named Usage - $adapterName', ({ adapter }: { adapter: () => AbstractHttpAdapter }) => {
  describe.each(STORES)('on the %s store', (kind) => {
    const served = useCompatApp(compat, kind, adapter, (setup) => FunctionOverridesThrottlerModule.register(setup));
    const spec = () => specAt(served.baseUrl());
    const setTimeout = served.setTimeout;

    describe('Default Routes', () => {
      it('should receive an exception when firing 3 requests within 3 seconds to the same endpoint', async () => {
        await spec().get('/').expectStatus(200).expectHeader(remainingHeader(), '1').expectHeader(limitHeader(), '2');
        await spec().get('/1').expectStatus(200).expectHeader(remainingHeader(), '1').expectHeader(limitHeader(), '2');
        await spec().get('/').expectStatus(200).expectHeaderContains(remainingHeader(), '0');
        await spec().get('/').expectStatus(429).expectHeaderContains(retryHeader(), /^\d+$/);
        await spec().get('/1').expectStatus(200).expectHeaderContains(remainingHeader(), '0');
        await spec().get('/').expectStatus(429).expectHeaderContains(retryHeader(), /^\d+$/);
        await setTimeout(3000);
        await spec().get('/').expectStatus(200).expectHeader(remainingHeader(), '1').expectHeader(limitHeader(), '2');
      });
    });

    describe('Custom Routes', () => {
      it('should receive an exception when firing 3 requests within 3 seconds to any endpoint', async () => {
        await spec().get('/custom').expectStatus(200).expectHeader(remainingHeader(custom), '1').expectHeader(limitHeader(custom), '2');
        await spec().get('/custom/1').expectStatus(200).expectHeader(remainingHeader(custom), '0').expectHeader(limitHeader(custom), '2');
        await spec().get('/custom').expectStatus(429).expectHeaderContains(retryHeader(custom), /^\d+$/);
        await spec().get('/custom/1').expectStatus(429).expectHeaderContains(retryHeader(custom), /^\d+$/);
        await setTimeout(3000);
        await spec().get('/custom').expectStatus(200).expectHeader(remainingHeader(custom), '1').expectHeader(limitHeader(custom), '2');
        await spec().get('/custom/1').expectStatus(200).expectHeader(remainingHeader(custom), '0').expectHeader(limitHeader(custom), '2');
      });
    });
  });
});
