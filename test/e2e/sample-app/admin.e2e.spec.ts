import { ConfigService } from '@nestjs/config';
import request from 'supertest';
import { APP_CONFIG, type AppConfig } from '../../../sample-app/src/config/app.config.js';
import { RateLimitPolicies } from '../../../lib/index.js';
import { ADMIN_TOKEN, SAMPLE_STORES, sampleAppsOn, type Sample } from './support/sample-app.js';

/** `token: null` sends no Authorization header. */
const patch = (sample: Sample, rule: string, body: object, token: string | null = ADMIN_TOKEN) => {
  const req = request(sample.server).patch(`/admin/rate-limits/${rule}`).send(body);
  return token === null ? req : req.set('Authorization', `Bearer ${token}`);
};
const login = (sample: Sample, password: string) => request(sample.server).post('/auth/login').send({ username: 'alice', password });

describe.each(SAMPLE_STORES)('PATCH /admin/rate-limits/:rule on the %s store', (store) => {
  const apps = sampleAppsOn(store);
  let sample: Sample;
  beforeEach(async () => {
    sample = await apps.start({ RATE_LIMIT_API_KEY_LIMIT: '2', RATE_LIMIT_API_KEY_REFILL: '1' });
  });

  it('answers 401 without a bearer token', async () => {
    await patch(sample, 'default', { limit: 1 }, null).expect(401);
    await request(sample.server).patch('/admin/rate-limits/default').set('Authorization', `Basic ${ADMIN_TOKEN}`).send({ limit: 1 }).expect(401);
  });

  it('answers 403 to a wrong token', async () => {
    await patch(sample, 'default', { limit: 1 }, 'not-the-token').expect(403);
  });

  it('puts a new default limit in force for the next request', async () => {
    const res = await patch(sample, 'default', { limit: 1 });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ rule: 'default', settings: { limit: 1, window: '1m', algorithm: 'sliding-window' } });
    await request(sample.server).get('/api/items').expect(200);
    await request(sample.server).get('/api/items').expect(429);
  });

  it('puts a new limit of a rule used by business code in force', async () => {
    await patch(sample, 'login-user', { limit: 1 }).expect(200);
    await login(sample, 'guess').expect(401);
    await login(sample, 'wonderland').expect(429);
  });

  it('puts a new window in force, written as a duration', async () => {
    await patch(sample, 'login-user', { window: '10s' }).expect(200);
    for (let i = 0; i < 3; i++) await login(sample, `guess-${i}`).expect(401);
    const locked = await login(sample, 'wonderland').expect(429);
    // The window says 10 s; the wait is the account's 1-minute lockout, which is longer.
    expect([locked.headers['ratelimit-policy'], locked.body.retryAfter]).toEqual(['"login-user";q=3;w=10', 60]);
  });

  it('refuses an invalid limit with 400 naming the field, and keeps the rule in force', async () => {
    const res = await patch(sample, 'api-key', { limit: 0 });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ statusCode: 400, field: 'rateLimit.rules.api-key.limit' });
    expect(res.body.message).toContain('rateLimit.rules.api-key.limit');
    const item = () => request(sample.server).get('/api/items/1').set('X-Api-Key', 'k');
    await item().expect(200);
    await item().expect(200);
    await item().expect(429);
  });

  it('refuses an unknown algorithm with 400 naming the field', async () => {
    const res = await patch(sample, 'default', { algorithm: 'leaky-bucket' });
    expect(res.status).toBe(400);
    expect(res.body.field).toBe('rateLimit.defaultRule.algorithm');
  });

  it('refuses a field other than limit, window and algorithm with 400 naming it', async () => {
    const res = await patch(sample, 'default', { limit: 5, cost: 2 });
    expect(res.status).toBe(400);
    expect(res.body.field).toBe('cost');
  });

  it('answers 404 to a rule that does not exist, dotted paths included', async () => {
    await patch(sample, 'nope', { limit: 1 }).expect(404);
    await patch(sample, 'login-ip.limit', { limit: 1 }).expect(404);
    await patch(sample, '__proto__', { limit: 1 }).expect(404);
  });

  it('switches a rule to another algorithm, dropping the settings of the old one', async () => {
    const res = await patch(sample, 'api-key', { algorithm: 'fixed-window' });
    expect(res.status).toBe(200);
    expect(res.body.settings).toEqual({ limit: '2', window: '1m', algorithm: 'fixed-window', overrides: true });
    expect(sample.app.get(RateLimitPolicies).get('api-key')?.rule).toMatchObject({ algorithm: 'fixed-window', limit: 2, windowMs: 60_000 });
    await request(sample.server).get('/api/items/1').set('X-Api-Key', 'k').expect(200);
  });
});

describe('PATCH /admin/rate-limits/:rule without ADMIN_TOKEN', () => {
  const apps = sampleAppsOn('memory');

  it('takes the token generated at start-up, and only that one', async () => {
    const sample = await apps.start({ ADMIN_TOKEN: '' });
    const { adminToken, adminTokenGenerated } = sample.app.get(ConfigService).getOrThrow<AppConfig>(APP_CONFIG);
    expect(adminTokenGenerated).toBe(true);
    expect(adminToken).toMatch(/^[\w-]{24}$/);
    await patch(sample, 'default', { limit: 1 }, 'anything').expect(403);
    await patch(sample, 'default', { limit: 5 }, adminToken).expect(200);
  });
});

describe('the admin API under the limits it sets', () => {
  const apps = sampleAppsOn('memory');

  it('stays reachable after the default rule is set to 1/min', async () => {
    const sample = await apps.start();
    await patch(sample, 'default', { limit: 1 }).expect(200);
    await request(sample.server).get('/api/items').expect(200);
    await request(sample.server).get('/api/items').expect(429);
    for (let i = 0; i < 5; i++) await patch(sample, 'default', { limit: 1 + i }).expect(200);
    await request(sample.server).get('/api/items').expect(200);
  });

  it('limits wrong tokens per IP with its own rule, which no PATCH can change', async () => {
    const sample = await apps.start();
    await patch(sample, 'admin', { limit: 1000 }).expect(404);
    for (let i = 1; i < 30; i++) await patch(sample, 'default', { limit: 1 }, `guess-${i}`).expect(403);
    await patch(sample, 'default', { limit: 1 }, 'guess-31').expect(429);
    await patch(sample, 'default', { limit: 1 }).expect(429);
  });
});
