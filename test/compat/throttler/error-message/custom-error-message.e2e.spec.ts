import type { AbstractHttpAdapter } from '@nestjs/core';
import { ADAPTERS, STORES, useCompatApp, useCompatSetup } from '../utility/compat-setup.js';
import { httPromise } from '../utility/httpromise.js';
import { CustomErrorMessageThrottlerModule } from './app.module.js';

/**
 * @nestjs/throttler's test/error-message/custom-error-message.e2e-spec.ts: `errorMessage(context, detail)` where
 * `detail.totalHits` counts the refused request, as throttler's does (3 for the third request under a limit of 2).
 * pactum's `spec()` calls are made with throttler's own httPromise.
 */
const compat = useCompatSetup();

describe.each(ADAPTERS)('Function-Overrides-Throttler Named Usage - $adapterName', ({ adapter }: { adapter: () => AbstractHttpAdapter }) => {
  describe.each(STORES)('on the %s store', (kind) => {
    const served = useCompatApp(compat, kind, adapter, (setup) => CustomErrorMessageThrottlerModule.register(setup));

    // throttler expects '::1', where `listen(0)` is reached on its CI; the address is the platform's (Fastify takes
    // `localhost`, 127.0.0.1 here): the client address of app.getUrl(), which the request comes from.
    const clientIp = () => new URL(served.baseUrl()).hostname.replace(/^\[|\]$/g, '');

    describe.each`
      route        | errorMessage
      ${'default'} | ${'CustomErrorMessageController-defaultRoute ::1 3'}
      ${'other'}   | ${'CustomErrorMessageController-otherRoute ::1 3'}
    `('Custom-error-message Route - $route', ({ route, errorMessage: message }: { route: string; errorMessage: string }) => {
      it('should receive a custom exception', async () => {
        const errorMessage = message.replace('::1', clientIp());
        const limit = 2;
        for (let i = 0; i < limit; i++) {
          expect((await httPromise(`${served.baseUrl()}/${route}`)).status).toBe(200);
        }

        const refused = await httPromise(`${served.baseUrl()}/${route}`);
        expect(refused.status).toBe(429);
        expect(JSON.stringify(refused.data)).toContain(errorMessage);
      });
    });
  });
});
