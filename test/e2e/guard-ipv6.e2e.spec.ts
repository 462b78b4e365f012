import { PLATFORMS } from './support/http-app.js';
import { STORES, useGuardApps, useRedisServer, type GuardApp } from './fixtures/guard-app.js';
import { IpController, ONE_PER_MINUTE } from './fixtures/client-ip/ip.controller.js';

const redis = useRedisServer();

describe.each(PLATFORMS)('IPv6 clients on %s', (platform) => {
  describe.each(STORES)('with the %s store', (store) => {
    const start = useGuardApps(platform, store, redis);
    // The requests come from loopback; a trusted proxy header is how a test gets other client addresses in.
    const startTrusting = (options: { ipv6Subnet?: number } = {}) => start({ globalGuard: true, trustProxy: true, ...options }, { controllers: [IpController] });
    const from = ({ http }: GuardApp, address: string) => http().get('/ip').set('X-Forwarded-For', address);

    it('counts two addresses of one /64 on one budget', async () => {
      const app = await startTrusting();
      await from(app, '2001:db8::1').expect(200);
      await from(app, '2001:db8::2:3').expect(429);
    });

    it('counts addresses of different /64 subnets apart', async () => {
      const app = await startTrusting();
      await from(app, '2001:db8::1').expect(200);
      await from(app, '2001:db8:0:1::1').expect(200);
    });

    it('keys an IPv6 client by its /64 subnet', async () => {
      const app = await startTrusting();
      await from(app, '2001:db8::abcd').expect(200);
      expect((await app.service.peek('ip:IpController.limited|ip:2001:db8:0:0:0:0:0:0/64', ONE_PER_MINUTE)).allowed).toBe(false);
    });

    it('groups by the prefix length the ipv6Subnet option gives', async () => {
      const app = await startTrusting({ ipv6Subnet: 48 });
      await from(app, '2001:db8::1').expect(200);
      await from(app, '2001:db8:0:1::1').expect(429);
      await from(app, '2001:db8:1::1').expect(200);
    });

    it('counts every address apart with ipv6Subnet: 128', async () => {
      const app = await startTrusting({ ipv6Subnet: 128 });
      await from(app, '2001:db8::1').expect(200);
      await from(app, '2001:db8::2').expect(200);
      await from(app, '2001:db8::1').expect(429);
    });

    it('counts an IPv4-mapped IPv6 address as the IPv4 address', async () => {
      const app = await startTrusting();
      await from(app, '::ffff:203.0.113.7').expect(200);
      await from(app, '203.0.113.7').expect(429);
    });

    it('groups the IPv6 address the platform computes under its own trust setting', async () => {
      const app = await start({ globalGuard: true }, { controllers: [IpController] }, { platformTrustProxy: true });
      await from(app, '2001:db8::1').expect(200);
      await from(app, '2001:db8::ffff').expect(429);
    });
  });
});
