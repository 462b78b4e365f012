import { RateLimitModule } from '../../lib/index.js';
import { startApp } from '../e2e/support/http-app.js';
import { startRedis, uniquePrefix, type TestRedis } from '../support/redis-server.js';

// A client passed as "store" outlives the apps built on it (tests, workers, a client shared by several modules):
// each app used to leave a 'ready' listener on it, and the eleventh printed MaxListenersExceededWarning.
describe('listeners on a client passed in', () => {
  let redis: TestRedis;
  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(() => redis.stop());

  it('are taken off when each app closes, however many apps used the client', async () => {
    const client = redis.client();
    await client.ping();
    const before = { ready: client.listenerCount('ready'), error: client.listenerCount('error') };
    for (let i = 0; i < 12; i++) {
      const app = await startApp('express', { imports: [RateLimitModule.forRoot({ store: client, keyPrefix: uniquePrefix(), metrics: false })] });
      await app.close();
    }
    expect({ ready: client.listenerCount('ready'), error: client.listenerCount('error') }).toEqual(before);
  });
});
