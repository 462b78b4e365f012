import request from 'supertest';
import { SAMPLE_STORES, sampleAppsOn, type Sample } from './support/sample-app.js';

const login = (sample: Sample, username: string, password: string) => request(sample.server).post('/auth/login').send({ username, password });
const scrape = async (sample: Sample) => (await request(sample.server).get('/metrics').expect(200)).text;

describe.each(SAMPLE_STORES)('login lockouts in /metrics on the %s store', (store) => {
  const apps = sampleAppsOn(store);

  it('counts the login 429s as rejected under the login rule', async () => {
    const sample = await apps.start();
    for (let i = 0; i < 3; i++) await login(sample, 'alice', `guess-${i}`).expect(401);
    await login(sample, 'alice', 'wonderland').expect(429);
    await login(sample, 'alice', 'wonderland').expect(429);
    expect(await scrape(sample)).toContain('rate_limit_decisions_total{rule="login-user",result="rejected"} 2');
  });

  it('still counts the login 429s under the route in the app\'s own counter', async () => {
    const sample = await apps.start();
    for (let i = 0; i < 3; i++) await login(sample, 'alice', `guess-${i}`).expect(401);
    await login(sample, 'alice', 'wonderland').expect(429);
    expect(await scrape(sample)).toContain('sample_rate_limit_rejections_total{route="/auth/login"} 1');
  });

  it('answers a login 429 with the RateLimit fields of the locked account\'s rule', async () => {
    const sample = await apps.start();
    for (let i = 0; i < 3; i++) await login(sample, 'alice', `guess-${i}`).expect(401);
    const locked = await login(sample, 'alice', 'wonderland').expect(429);
    sample.limits.expectRateLimited(locked, { rule: 'login-user', retryAfter: 60 });
    expect(locked.headers['retry-after']).toBe('60');
    expect(locked.headers['ratelimit-policy']).toBe('"login-user";q=3;w=60');
    expect(locked.headers['ratelimit']).toBe('"login-user";r=0;t=60');
  });
});
