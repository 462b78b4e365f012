import request from 'supertest';
import { ADMIN_TOKEN, SAMPLE_STORES, sampleAppsOn, type Sample } from './support/sample-app.js';

const overrides = (sample: Sample, rule = 'api-key') => `/admin/rate-limits/${rule}/overrides`;
/** The key the guard charges under the shared `api-key` rule: the key's label and the header's value. */
const tracker = (apiKey: string) => `header:x-api-key:${apiKey}`;
const put = (sample: Sample, key: string, body: object, rule = 'api-key') => request(sample.server).put(`${overrides(sample, rule)}/${encodeURIComponent(rule === 'api-key' ? tracker(key) : key)}`).set('Authorization', `Bearer ${ADMIN_TOKEN}`).send(body);
const item = (sample: Sample, apiKey: string) => request(sample.server).get('/api/items/1').set('X-Api-Key', apiKey);

describe.each(SAMPLE_STORES)('per-key overrides through the admin API on the %s store', (store) => {
  const apps = sampleAppsOn(store);
  let sample: Sample;
  beforeEach(async () => {
    // A bucket of 2 per API key.
    sample = await apps.start({ RATE_LIMIT_API_KEY_LIMIT: '2', RATE_LIMIT_API_KEY_REFILL: '1' });
  });

  it('raises one customer limit and leaves the others under the rule', async () => {
    const res = await put(sample, 'big-customer', { limit: 4, ttlMs: '1h', reason: 'ticket 42' }).expect(200);
    expect(res.body).toEqual({ rule: 'api-key', key: tracker('big-customer'), limit: 4, block: false, expiresAt: sample.clock.now() + 3_600_000, reason: 'ticket 42' });
    for (let i = 0; i < 4; i++) await item(sample, 'big-customer').expect(200);
    await item(sample, 'big-customer').expect(429);
    await item(sample, 'small-customer').expect(200);
    await item(sample, 'small-customer').expect(200);
    await item(sample, 'small-customer').expect(429);
  });

  it('blocks one key until its override ends, the time left as Retry-After', async () => {
    await put(sample, 'abuser', { block: true, ttlMs: '10m' }).expect(200);
    sample.clock.advance(60_000);
    const refused = await item(sample, 'abuser').expect(429);
    expect(refused.headers['retry-after']).toBe('540');
    sample.clock.advance(540_000);
    await item(sample, 'abuser').expect(200);
  });

  it('lists the overrides in force and removes one, restoring the rule at once', async () => {
    await put(sample, 'abuser', { block: true, ttlMs: '10m' }).expect(200);
    await put(sample, 'big-customer', { limit: 4, ttlMs: '1h' }).expect(200);
    const listed = await request(sample.server).get(overrides(sample)).set('Authorization', `Bearer ${ADMIN_TOKEN}`).expect(200);
    expect(listed.body.map((o: { key: string }) => o.key)).toEqual([tracker('abuser'), tracker('big-customer')]);
    const remove = () => request(sample.server).delete(`${overrides(sample)}/${encodeURIComponent(tracker('abuser'))}`);
    await remove().set('Authorization', `Bearer ${ADMIN_TOKEN}`).expect(204);
    await item(sample, 'abuser').expect(200);
    await remove().set('Authorization', `Bearer ${ADMIN_TOKEN}`).expect(404);
  });

  it('answers 400 naming the field of an invalid override', async () => {
    const res = await put(sample, 'k', { limit: 0, ttlMs: '1h' }).expect(400);
    expect(res.body).toMatchObject({ statusCode: 400, field: 'override.limit' });
    expect((await put(sample, 'k', { limit: 5 }).expect(400)).body.field).toBe('override.ttlMs');
  });

  it('answers 400 for a rule without overrides, 404 for no rule', async () => {
    expect((await put(sample, 'alice', { limit: 5, ttlMs: '1h' }, 'login-user').expect(400)).body.field).toBe('rules.login-user.overrides');
    await put(sample, 'k', { limit: 5, ttlMs: '1h' }, 'nope').expect(404);
  });

  it('answers 401 without the admin token', async () => {
    await request(sample.server).put(`${overrides(sample)}/k`).send({ block: true, ttlMs: '1h' }).expect(401);
    await request(sample.server).get(overrides(sample)).expect(401);
  });
});
