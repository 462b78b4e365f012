import request from 'supertest';
import { SAMPLE_STORES, sampleAppsOn, type Sample } from './support/sample-app.js';

const login = (sample: Sample, password: string) => request(sample.server).post('/auth/login').send({ username: 'alice', password });
const listItems = (sample: Sample) => request(sample.server).get('/api/items');

/** The README's "Testing your app", on the sample app: the kit's switches, one test at a time. */
describe.each(SAMPLE_STORES)('the testing kit on the sample app, %s store', (store) => {
  const shared = sampleAppsOn(store).shared({ RATE_LIMIT_DEFAULT_LIMIT: '5' });
  let sample: Sample;
  beforeEach(() => {
    sample = shared();
  });

  it('raises the login limits for one test with setRule', async () => {
    sample.limits.setRule('login-user', { limit: 10 });
    sample.limits.setRule('login-ip', { limit: 20 });
    sample.limits.setRule('default', { limit: 20 }); // the global guard's rule, per IP, covers /auth/login too
    for (let i = 0; i < 10; i++) await login(sample, `guess-${i}`).expect(401);
    sample.limits.expectRateLimited(await login(sample, 'wonderland'), { rule: 'login-user', retryAfter: 60 });
  });

  it('has the login limit of the configuration again in the next test', async () => {
    for (let i = 0; i < 3; i++) await login(sample, `guess-${i}`).expect(401);
    sample.limits.expectRateLimited(await login(sample, 'wonderland'), { rule: 'login-user', retryAfter: 60 });
  });

  it('lets every request through while limits are off, and counts none of them', async () => {
    sample.limits.disable();
    for (let i = 0; i < 10; i++) await listItems(sample).expect(200);
    for (let i = 0; i < 5; i++) await login(sample, `guess-${i}`).expect(401);
    sample.limits.enable();
    for (let i = 0; i < 5; i++) await listItems(sample).expect(200);
    sample.limits.expectRateLimited(await listItems(sample), { rule: 'default' });
  });

  it('moves the sample app\'s windows with the test clock', async () => {
    for (let i = 0; i < 5; i++) await listItems(sample).expect(200);
    const refused = sample.limits.expectRateLimited(await listItems(sample), { rule: 'default' });
    sample.limits.advance(refused.retryAfter * 1000);
    await listItems(sample).expect(200);
  });
});
