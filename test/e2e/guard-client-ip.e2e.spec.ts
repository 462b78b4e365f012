import { PLATFORMS } from './support/http-app.js';
import { STORES, useGuardApps, useRedisServer, type GuardApp } from './fixtures/guard-app.js';
import { IpController, ONE_PER_MINUTE } from './fixtures/client-ip/ip.controller.js';

const redis = useRedisServer();

describe.each(PLATFORMS)('client IP behind proxies on %s', (platform) => {
  describe.each(STORES)('with the %s store', (store) => {
    const start = useGuardApps(platform, store, redis);
    const from = ({ http }: GuardApp, forwardedFor: string) => http().get('/ip').set('X-Forwarded-For', forwardedFor);

    describe('without any trusted proxy', () => {
      it('counts every request from one socket address on one budget, whatever X-Forwarded-For says', async () => {
        const app = await start({ globalGuard: true }, { controllers: [IpController] });
        await from(app, '203.0.113.1').expect(200);
        await from(app, '203.0.113.2').expect(429);
      });

      it('keys the requests by the socket address', async () => {
        const app = await start({ globalGuard: true }, { controllers: [IpController] });
        await from(app, '203.0.113.1').expect(200);
        expect((await app.service.peek('ip:IpController.limited|ip:127.0.0.1', ONE_PER_MINUTE)).allowed).toBe(false);
      });
    });

    describe('with the platform trusting proxies', () => {
      it('counts each forwarded client on a budget of its own', async () => {
        const app = await start({ globalGuard: true }, { controllers: [IpController] }, { platformTrustProxy: true });
        await from(app, '203.0.113.1').expect(200);
        await from(app, '203.0.113.2').expect(200);
        await from(app, '203.0.113.1').expect(429);
      });

      it('ignores X-Forwarded-For when the module sets trustProxy: false', async () => {
        const app = await start({ globalGuard: true, trustProxy: false }, { controllers: [IpController] }, { platformTrustProxy: true });
        await from(app, '203.0.113.1').expect(200);
        await from(app, '203.0.113.2').expect(429);
      });
    });

    describe('with the module\'s trustProxy and an untrusting platform', () => {
      it('counts each forwarded client apart with trustProxy: true', async () => {
        const app = await start({ globalGuard: true, trustProxy: true }, { controllers: [IpController] });
        await from(app, '203.0.113.1').expect(200);
        await from(app, '203.0.113.2').expect(200);
        await from(app, '203.0.113.1').expect(429);
      });

      it('counts each forwarded client apart when the loopback proxy is trusted by name', async () => {
        const app = await start({ globalGuard: true, trustProxy: 'loopback' }, { controllers: [IpController] });
        await from(app, '203.0.113.1').expect(200);
        await from(app, '203.0.113.2').expect(200);
      });

      it('ignores X-Forwarded-For when the socket address is outside the trusted ranges', async () => {
        const app = await start({ globalGuard: true, trustProxy: ['10.0.0.0/8'] }, { controllers: [IpController] });
        await from(app, '203.0.113.1').expect(200);
        await from(app, '203.0.113.2').expect(429);
      });

      it('takes the first untrusted address of the chain as the client', async () => {
        const app = await start({ globalGuard: true, trustProxy: ['loopback', '10.0.0.0/8'] }, { controllers: [IpController] });
        await from(app, '203.0.113.1, 10.0.0.5').expect(200);
        await from(app, '203.0.113.1, 10.0.0.6').expect(429);
        await from(app, '203.0.113.2, 10.0.0.5').expect(200);
      });

      it('does not let a client prepend addresses to a chain that ends in an untrusted one', async () => {
        const app = await start({ globalGuard: true, trustProxy: ['loopback'] }, { controllers: [IpController] });
        await from(app, '198.51.100.1, 203.0.113.1').expect(200);
        await from(app, '198.51.100.2, 203.0.113.1').expect(429);
      });

      it('believes as many hops as a hop count says', async () => {
        const app = await start({ globalGuard: true, trustProxy: 1 }, { controllers: [IpController] });
        await from(app, '198.51.100.1, 203.0.113.1').expect(200);
        await from(app, '198.51.100.2, 203.0.113.1').expect(429);
        await from(app, '198.51.100.1, 203.0.113.2').expect(200);
      });
    });
  });
});
