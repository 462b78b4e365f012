import type { AbstractHttpAdapter } from '@nestjs/core';
import { ADAPTERS, STORES, useCompatApp, useCompatSetup } from '../utility/compat-setup.js';
import { spec as specAt } from '../utility/expect-response.js';
import { MultiThrottlerAppModule } from './app.module.js';

/**
 * @nestjs/throttler's test/multi/multi-throttler.e2e-spec.ts, its sleeps as clock moves. The three tests of the
 * default route run in order on one budget, as throttler's do.
 */
const commonHeader = (prefix: string, name?: string) => `${prefix}${name ? '-' + name : ''}`;

const remainingHeader = (name?: string) => commonHeader('x-ratelimit-remaining', name);
const limitHeader = (name?: string) => commonHeader('x-ratelimit-limit', name);
const retryHeader = (name?: string) => commonHeader('retry-after', name);

const short = 'short';
const long = 'long';
const compat = useCompatSetup();

describe.each(ADAPTERS)('Multi-Throttler Named Usage - $adapterName', ({ adapter }: { adapter: () => AbstractHttpAdapter }) => {
  describe.each(STORES)('on the %s store', (kind) => {
    const served = useCompatApp(compat, kind, adapter, (setup) => MultiThrottlerAppModule.register(setup));
    const spec = () => specAt(served.baseUrl());
    const setTimeout = served.setTimeout;

    describe('Default Route: 1/s, 2/5s, 5/min', () => {
      it('should receive an exception when firing 2 requests within a second', async () => {
        await spec().get('/').expectStatus(200).expectHeader(remainingHeader(short), '0').expectHeader(limitHeader(short), '1');
        await spec().get('/').expectStatus(429).expectHeaderContains(retryHeader(short), /^\d+$/);
        await setTimeout(1000);
      });
      it('should get an error if we send two more requests within the first five seconds', async () => {
        await spec().get('/').expectStatus(200).expectHeader(remainingHeader(), '0').expectHeader(limitHeader(), '2');
        await setTimeout(1000);
        await spec().get('/').expectStatus(429).expectHeaderContains(retryHeader(), /^\d+$/);
        await setTimeout(5000);
      });
      it('should get an error if we smartly send 4 more requests within the minute', async () => {
        await spec().get('/').expectStatus(200).expectHeader(limitHeader(long), '5').expectHeader(remainingHeader(long), '2').expectHeader(remainingHeader(short), '0');
        await setTimeout(1000);
        await spec().get('/').expectStatus(200).expectHeader(remainingHeader(), '0');
        // throttler: console.log('waiting 5 seconds');
        await setTimeout(5000);
        await spec().get('/').expectStatus(200).expectHeader(remainingHeader(long), '0').expectHeader(remainingHeader(short), '0').expectHeader(remainingHeader(), '1');
        await setTimeout(1000);
        await spec().get('/').expectStatus(429).expectHeaderContains(retryHeader(long), /^\d+$/);
      });
    });
    describe('skips', () => {
      it('should skip the short throttler', async () => {
        await spec().get('/skip-short').expectStatus(200).expectHeader(remainingHeader(), '1');
        await spec().get('/skip-short').expectStatus(200).expectHeader(remainingHeader(), '0');
      });
      it('should skip the default and long trackers', async () => {
        await spec()
          .get('/skip-default-and-long')
          .expectStatus(200)
          .expectHeader(remainingHeader(short), '0')
          .expect((ctx) => {
            const { headers } = ctx.res;
            expect(headers[remainingHeader('default')]).toBeUndefined();
            expect(headers[remainingHeader('long')]).toBeUndefined();
          });
      });
    });
  });
});
