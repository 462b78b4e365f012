import request from 'supertest';
import { RateLimitService } from '../../../lib/index.js';
import { uniquePrefix } from '../../support/redis-server.js';
import { SAMPLE_STORES, sampleAppsOn, type Sample } from './support/sample-app.js';

// The search backend's limit, for every instance and client together (the `search` rule, one key, `localBudget`).
// Windows of a minute or more: the test clock stands still, while Redis expires a window's key on its own clock.
const LIMITS = { RATE_LIMIT_DEFAULT_LIMIT: '1000', RATE_LIMIT_SEARCH_LIMIT: '4', RATE_LIMIT_SEARCH_WINDOW: '1m', RATE_LIMIT_SEARCH_TAKE: '2' };
const search = (sample: Sample, text = 'lua') => request(sample.server).get('/api/items/search').query({ q: text });

describe.each(SAMPLE_STORES)('GET /api/items/search on the %s store', (store) => {
  const shared = sampleAppsOn(store).shared(LIMITS);
  let sample: Sample;
  beforeEach(() => {
    sample = shared();
  });

  it('finds the items by name, with the headers of both its rules', async () => {
    const res = await search(sample, 'TOKEN');
    expect(res.status).toBe(200);
    expect(res.body).toEqual([{ id: 3, name: 'Token bucket' }]);
    expect(res.headers['ratelimit-policy']).toBe('"default";q=1000;w=60, "search";q=4;w=60');
  });

  it('refuses the search past the backend\'s limit, whatever the client', async () => {
    for (let i = 0; i < 4; i++) await search(sample).set('X-Api-Key', `client-${i}`).expect(200);
    const res = await search(sample);
    sample.limits.expectRateLimited(res, { rule: 'search' });
    sample.limits.advance('1m');
    await search(sample).expect(200);
  });
});

describe('GET /api/items/search on two instances of the app on one Redis', () => {
  const apps = sampleAppsOn('redis');

  it('never admits more searches than the limit, the instances together, and Redis counts what they admitted', async () => {
    const env = { ...LIMITS, RATE_LIMIT_KEY_PREFIX: uniquePrefix('search'), RATE_LIMIT_SEARCH_LIMIT: '60', RATE_LIMIT_SEARCH_WINDOW: '1h', RATE_LIMIT_SEARCH_TAKE: '6' };
    const instances = [await apps.start(env), await apps.start(env)];
    let admitted = 0;
    // 4 requests in flight on each instance until both are refused.
    await Promise.all(
      instances.flatMap((sample) =>
        Array.from({ length: 4 }, async () => {
          for (let i = 0; i < 25; i++) {
            const res = await search(sample);
            if (res.status === 200) admitted++;
            else sample.limits.expectRateLimited(res, { rule: 'search' });
          }
        }),
      ),
    );
    expect(admitted).toBeLessThanOrEqual(60);
    // At most what each instance held when the other was refused, 6 units each, went unadmitted.
    expect(admitted).toBeGreaterThanOrEqual(60 - 2 * 6);

    const services = instances.map((sample) => sample.app.get(RateLimitService));
    for (const service of services) service.budgets!.clear();
    for (const service of services) await service.budgets!.settled();
    const client = apps.redis().client();
    try {
      const keys = await client.keys(`${env.RATE_LIMIT_KEY_PREFIX}:search:*`);
      expect(keys).toHaveLength(1);
      // A fixed window's value: its end (µs) + its count.
      expect(Number(await client.get(keys[0])) % 3_600_000_000).toBe(admitted);
    } finally {
      client.disconnect();
    }
  });
});
