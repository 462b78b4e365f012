import { PLATFORMS } from './support/http-app.js';
import { STORES, useGuardApps, useRedisServer, type GuardApp } from './fixtures/guard-app.js';
import { IpController, ONE_PER_MINUTE } from './fixtures/client-ip/ip.controller.js';

const redis = useRedisServer();

// IPv4-mapped IPv6 has many spellings; read as IPv6 they all fall in ::/64, one bucket for every IPv4 client.
describe.each(PLATFORMS)('IPv4-mapped IPv6 clients on %s', (platform) => {
  describe.each(STORES)('with the %s store', (store) => {
    const start = useGuardApps(platform, store, redis);
    // The requests come from loopback; a trusted proxy header is how a test gets other client addresses in.
    const startTrusting = () => start({ globalGuard: true, trustProxy: true }, { controllers: [IpController] });
    const from = ({ http }: GuardApp, address: string) => http().get('/ip').set('X-Forwarded-For', address);

    it('counts 0:0:0:0:0:ffff:9.9.9.9 and ::ffff:808:808 on two budgets', async () => {
      const app = await startTrusting();
      await from(app, '0:0:0:0:0:ffff:9.9.9.9').expect(200);
      await from(app, '::ffff:808:808').expect(200);
    });

    it('counts ::ffff:808:808 on the budget of 8.8.8.8', async () => {
      const app = await startTrusting();
      await from(app, '::ffff:808:808').expect(200);
      await from(app, '8.8.8.8').expect(429);
      expect((await app.service.peek('ip:IpController.limited|ip:8.8.8.8', ONE_PER_MINUTE)).allowed).toBe(false);
    });
  });
});
