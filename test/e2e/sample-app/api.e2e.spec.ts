import request from 'supertest';
import { SAMPLE_STORES, sampleAppsOn, type Sample } from './support/sample-app.js';

// Small budgets, so the limits show in a few requests: 3 per minute per IP, API-key buckets of 2.
const LIMITS = { RATE_LIMIT_DEFAULT_LIMIT: '3', RATE_LIMIT_API_KEY_LIMIT: '2', RATE_LIMIT_API_KEY_WINDOW: '1m' };
const item = (sample: Sample, id: number | string, apiKey?: string) => {
  const req = request(sample.server).get(`/api/items/${id}`);
  return apiKey === undefined ? req : req.set('X-Api-Key', apiKey);
};

describe.each(SAMPLE_STORES)('the API on the %s store', (store) => {
  // One app for the block: the testing kit forgets every key before each test.
  const shared = sampleAppsOn(store).shared(LIMITS);
  let sample: Sample;
  beforeEach(() => {
    sample = shared();
  });

  it('lists the items with the default rule\'s headers', async () => {
    const res = await request(sample.server).get('/api/items');
    expect(res.status).toBe(200);
    expect(res.body).toHaveLength(3);
    expect(res.headers['ratelimit-policy']).toBe('"default";q=3;w=60');
    expect(res.headers['ratelimit']).toMatch(/^"default";r=2;t=\d+$/);
  });

  it('refuses the fourth listing in a minute from one IP with 429', async () => {
    for (let i = 0; i < 3; i++) await request(sample.server).get('/api/items').expect(200);
    const res = await request(sample.server).get('/api/items');
    expect(res.status).toBe(429);
    sample.limits.expectRateLimited(res, { rule: 'default' });
    expect(res.body).toEqual({ statusCode: 429, message: 'Too Many Requests', retryAfter: expect.any(Number) });
    expect(res.headers['retry-after']).toBe(String(res.body.retryAfter));
  });

  it('answers 400 to an item request without X-Api-Key', async () => {
    const res = await item(sample, 1);
    expect(res.status).toBe(400);
    expect(res.body.message).toBe('Rate limit key "header:x-api-key" is missing from the request');
  });

  it('returns an item with the headers of both its rules', async () => {
    const res = await item(sample, 2, 'key-a');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ id: 2, name: 'Sorted set' });
    expect(res.headers['ratelimit-policy']).toBe('"default";q=3;w=60, "api-key";q=2;w=60');
  });

  it('refuses an API key with 429 once its bucket is empty, and not another key', async () => {
    await item(sample, 1, 'key-a').expect(200);
    await item(sample, 1, 'key-a').expect(200);
    sample.limits.expectRateLimited(await item(sample, 1, 'key-a'), { rule: 'api-key' });
    await item(sample, 1, 'key-b').expect(200);
  });

  it('refills an API key\'s bucket as time passes', async () => {
    await item(sample, 1, 'key-a').expect(200);
    await item(sample, 1, 'key-a').expect(200);
    sample.limits.advance('30s'); // 2 tokens a minute: one is back
    await item(sample, 1, 'key-a').expect(200);
    await item(sample, 1, 'key-a').expect(429);
  });

  it('answers 404 to an unknown item', async () => {
    await item(sample, 99, 'key-a').expect(404);
  });
});

describe.each(SAMPLE_STORES)('GET /health on the %s store', (store) => {
  const apps = sampleAppsOn(store);

  it('is never limited and carries no rate-limit headers', async () => {
    const sample = await apps.start({ RATE_LIMIT_DEFAULT_LIMIT: '1' });
    for (let i = 0; i < 5; i++) {
      const res = await request(sample.server).get('/health');
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ status: 'ok' });
      expect(res.headers['ratelimit-policy']).toBeUndefined();
    }
  });
});
