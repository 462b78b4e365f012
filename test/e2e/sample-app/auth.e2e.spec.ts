import request from 'supertest';
import { SAMPLE_STORES, sampleAppsOn, type Sample } from './support/sample-app.js';

const login = (sample: Sample, username: string, password: string) => request(sample.server).post('/auth/login').send({ username, password });

describe.each(SAMPLE_STORES)('POST /auth/login on the %s store', (store) => {
  // One app for the block: the testing kit forgets every key (lockouts included) before each test.
  const shared = sampleAppsOn(store).shared();
  let sample: Sample;
  beforeEach(() => {
    sample = shared();
  });

  it('logs a demo user in with the right password', async () => {
    const res = await login(sample, 'alice', 'wonderland');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ username: 'alice' });
  });

  it('answers 401 to a wrong password', async () => {
    const res = await login(sample, 'alice', 'guess');
    expect(res.status).toBe(401);
    expect(res.body.message).toBe('Invalid username or password');
  });

  it('answers 400 to a body without a username', async () => {
    await request(sample.server).post('/auth/login').send({ password: 'wonderland' }).expect(400);
  });

  it('locks the account with 429 and retryAfter after three failed attempts in a minute, even for the right password', async () => {
    for (let i = 0; i < 3; i++) await login(sample, 'alice', `guess-${i}`).expect(401);
    const res = await login(sample, 'alice', 'wonderland');
    expect(res.status).toBe(429);
    sample.limits.expectRateLimited(res, { rule: 'login-user', retryAfter: 60, message: 'Too many failed login attempts, try again later' });
    expect(res.body).toEqual({ statusCode: 429, message: 'Too many failed login attempts, try again later', retryAfter: 60 });
    expect(res.headers['retry-after']).toBe('60');
  });

  it('unlocks the account once retryAfter has passed', async () => {
    for (let i = 0; i < 3; i++) await login(sample, 'alice', `guess-${i}`).expect(401);
    const locked = await login(sample, 'alice', 'wonderland').expect(429);
    sample.limits.advance(locked.body.retryAfter * 1000);
    await login(sample, 'alice', 'wonderland').expect(200);
  });

  it('locks the account for 1, 2, then 4 minutes as each round of three failures follows the previous lockout', async () => {
    const retryAfters: string[] = [];
    for (let round = 0; round < 3; round++) {
      for (let i = 0; i < 3; i++) await login(sample, 'alice', `guess-${i}`).expect(401);
      const locked = await login(sample, 'alice', `guess-3`).expect(429);
      retryAfters.push(locked.headers['retry-after']);
      sample.limits.advance(locked.body.retryAfter * 1000);
    }
    expect(retryAfters).toEqual(['60', '120', '240']);
  });

  it('locks the account for 1 minute again after a successful login', async () => {
    for (let i = 0; i < 3; i++) await login(sample, 'alice', `guess-${i}`).expect(401);
    sample.limits.advance((await login(sample, 'alice', 'guess-3').expect(429)).body.retryAfter * 1000);
    await login(sample, 'alice', 'wonderland').expect(200);
    for (let i = 0; i < 3; i++) await login(sample, 'alice', `guess-${i}`).expect(401);
    const locked = await login(sample, 'alice', 'guess-3').expect(429);
    expect(locked.headers['retry-after']).toBe('60');
  });

  it('forgets the account\'s failed attempts after a successful login', async () => {
    await login(sample, 'alice', 'guess-1').expect(401);
    await login(sample, 'alice', 'guess-2').expect(401);
    await login(sample, 'alice', 'wonderland').expect(200);
    await login(sample, 'alice', 'guess-3').expect(401);
    await login(sample, 'alice', 'wonderland').expect(200);
  });

  it('does not count successful logins', async () => {
    for (let i = 0; i < 8; i++) await login(sample, 'bob', 'builder').expect(200);
  });

  it('locks the client IP after five failed attempts in a minute across usernames', async () => {
    for (const name of ['carol', 'dave', 'erin', 'frank', 'grace']) await login(sample, name, 'guess').expect(401);
    const res = await login(sample, 'alice', 'wonderland');
    expect(res.status).toBe(429);
    expect(res.body.retryAfter).toBe(60);
  });

  it('counts failures of one account whatever the case and spacing of its username', async () => {
    for (const name of ['Alice', 'ALICE', ' alice ']) await login(sample, name, 'guess').expect(401);
    await login(sample, 'alice', 'wonderland').expect(429);
  });

  it('locks an unknown username like a known one, so locks do not reveal which accounts exist', async () => {
    for (let i = 0; i < 3; i++) await login(sample, 'mallory', `guess-${i}`).expect(401);
    await login(sample, 'mallory', 'guess-4').expect(429);
  });
});

describe('POST /auth/login with limits from the environment', () => {
  const apps = sampleAppsOn('memory');

  it('locks the account after RATE_LIMIT_LOGIN_USER_LIMIT failed attempts', async () => {
    const sample = await apps.start({ RATE_LIMIT_LOGIN_USER_LIMIT: '1' });
    await login(sample, 'alice', 'guess').expect(401);
    await login(sample, 'alice', 'wonderland').expect(429);
  });
});
