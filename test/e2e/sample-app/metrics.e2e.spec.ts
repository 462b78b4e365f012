import request from 'supertest';
import { SAMPLE_STORES, sampleAppsOn, type Sample } from './support/sample-app.js';

const scrape = async (sample: Sample) => (await request(sample.server).get('/metrics').expect(200)).text;

describe.each(SAMPLE_STORES)('GET /metrics on the %s store', (store) => {
  const apps = sampleAppsOn(store);
  let sample: Sample;
  beforeEach(async () => {
    sample = await apps.start({ RATE_LIMIT_DEFAULT_LIMIT: '1' });
  });

  it('exposes the process metrics in the Prometheus text format', async () => {
    const res = await request(sample.server).get('/metrics');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(res.text).toContain('process_cpu_user_seconds_total');
    expect(res.text).toContain('# TYPE sample_rate_limit_rejections_total counter');
  });

  it('is never limited', async () => {
    for (let i = 0; i < 5; i++) await request(sample.server).get('/metrics').expect(200);
  });

  it('counts a refusal of the global guard under the route\'s pattern', async () => {
    await request(sample.server).get('/api/items').expect(200);
    await request(sample.server).get('/api/items').expect(429);
    await request(sample.server).get('/api/items').expect(429);
    expect(await scrape(sample)).toContain('sample_rate_limit_rejections_total{route="/api/items"} 2');
  });

  it("exposes the library's own decision metrics next to the app's", async () => {
    await request(sample.server).get('/api/items').expect(200);
    const text = await scrape(sample);
    expect(text).toMatch(/rate_limit_decisions_total\{rule="default",result="allowed"\} [1-9]/);
    expect(text).toContain('rate_limit_circuit_state');
  });

  it("exposes each rule's window utilisation: an admitted request at 1 of a limit of 1, the refused one above it", async () => {
    await request(sample.server).get('/api/items').expect(200);
    await request(sample.server).get('/api/items').expect(429);
    const text = await scrape(sample);
    expect(text).toContain('# TYPE rate_limit_window_utilization histogram');
    expect(text).toContain('rate_limit_window_utilization_bucket{le="0.95",rule="default"} 0');
    expect(text).toContain('rate_limit_window_utilization_bucket{le="1",rule="default"} 1');
    expect(text).toContain('rate_limit_window_utilization_count{rule="default"} 2');
  });

  it('counts a refusal on a route with a parameter under the pattern, not the URL', async () => {
    await request(sample.server).get('/api/items/1').set('X-Api-Key', 'k').expect(200);
    await request(sample.server).get('/api/items/2').set('X-Api-Key', 'k').expect(429);
    expect(await scrape(sample)).toContain('sample_rate_limit_rejections_total{route="/api/items/:id"} 1');
  });

  it('counts a refusal thrown by business code (a locked account)', async () => {
    const metered = await apps.start({ RATE_LIMIT_LOGIN_USER_LIMIT: '1' });
    await request(metered.server).post('/auth/login').send({ username: 'alice', password: 'guess' }).expect(401);
    await request(metered.server).post('/auth/login').send({ username: 'alice', password: 'guess' }).expect(429);
    expect(await scrape(metered)).toContain('sample_rate_limit_rejections_total{route="/auth/login"} 1');
  });
});
