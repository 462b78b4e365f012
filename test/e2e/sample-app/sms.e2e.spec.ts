import request from 'supertest';
import { StubSmsProvider } from '../../../sample-app/src/sms/stub-sms.provider.js';
import { SAMPLE_STORES, sampleAppsOn, type Sample } from './support/sample-app.js';

const PHONE = '+14155550123';
const MINUTE = 60_000;
const sendCode = (sample: Sample, body: object = { phone: PHONE }) => request(sample.server).post('/sms/code').send(body);
const outbox = (sample: Sample) => sample.app.get(StubSmsProvider).sent;

/** Sends codes `every` minutes apart, from now on, each expected to pass. */
async function sendEvery(sample: Sample, minutes: number, count: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    if (i > 0) sample.limits.advance(minutes * MINUTE);
    await sendCode(sample).expect(200);
  }
}

describe.each(SAMPLE_STORES)('POST /sms/code on the %s store', (store) => {
  const apps = sampleAppsOn(store);
  let sample: Sample;
  beforeEach(async () => {
    sample = await apps.start();
  });

  it('sends a six-digit code to a valid phone number', async () => {
    const res = await sendCode(sample);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ sent: true });
    expect(outbox(sample)).toEqual([{ to: PHONE, text: expect.stringMatching(/^Your login code is \d{6}$/) }]);
  });

  it('answers 400 to phone numbers that are not E.164', async () => {
    for (const phone of ['+1 415 555 0123', '004415555012', '+0123456789', 'alice', 42]) await sendCode(sample, { phone }).expect(400);
  });

  it('refuses a second code within a minute with 429 and retryAfter', async () => {
    await sendCode(sample).expect(200);
    sample.limits.advance(20_000);
    const res = await sendCode(sample);
    expect(res.status).toBe(429);
    sample.limits.expectRateLimited(res, { rule: 'sms-minute', retryAfter: 40 });
    expect(res.body.retryAfter).toBe(40);
    expect(res.headers['retry-after']).toBe('40');
  });

  it('does not call the provider for a refused request', async () => {
    await sendCode(sample).expect(200);
    await sendCode(sample).expect(429);
    expect(outbox(sample)).toHaveLength(1);
  });

  it('sends another code once the minute has passed', async () => {
    await sendCode(sample).expect(200);
    sample.limits.advance(MINUTE);
    await sendCode(sample).expect(200);
  });

  it('keeps the budgets of different phone numbers apart', async () => {
    await sendCode(sample).expect(200);
    await sendCode(sample, { phone: '+447700900123' }).expect(200);
  });

  it('refuses a sixth code within an hour until the first is an hour old', async () => {
    await sendEvery(sample, 1, 5);
    sample.limits.advance(MINUTE);
    const res = await sendCode(sample);
    expect(res.status).toBe(429);
    expect(res.body.retryAfter).toBe(55 * 60);
  });

  it('refuses an eleventh code within a day until the first is a day old', async () => {
    await sendEvery(sample, 13, 10);
    sample.limits.advance(13 * MINUTE);
    const res = await sendCode(sample);
    expect(res.status).toBe(429);
    expect(res.body.retryAfter).toBe((24 * 60 - 130) * 60);
  });

  it('charges a request the hour refuses to neither the minute nor the day (all or nothing)', async () => {
    await sendEvery(sample, 13, 5); // minutes 0 to 52: the hour is full
    sample.limits.advance(7 * MINUTE + 30_000);
    for (let i = 0; i < 10; i++) await sendCode(sample).expect(429);
    sample.limits.advance(30_000); // the first code is now an hour old
    // Charged to the minute, the refused requests would refuse this one; charged to the day, they would have
    // filled it before the tenth code.
    await sendEvery(sample, 13, 5);
  });

  it('refunds a send the provider fails, so the next request gets a code', async () => {
    const failed = await sendCode(sample, { phone: PHONE, simulateFailure: true });
    expect(failed.status).toBe(502);
    await sendCode(sample).expect(200);
  });
});

describe('POST /sms/code with SMS_PROVIDER_FAIL=true', () => {
  const apps = sampleAppsOn('memory');

  it('answers 502 to every request and never 429, since failed sends are refunded', async () => {
    const sample = await apps.start({ SMS_PROVIDER_FAIL: 'true' });
    for (let i = 0; i < 12; i++) await sendCode(sample).expect(502);
  });
});

describe('POST /sms/code on Redis, keys', () => {
  const apps = sampleAppsOn('redis');
  // One app: the testing kit erases its keys (every key under its prefix) before each test.
  const shared = apps.shared();
  /** The rules of the keys written, leaving out the guard's default rule (per client IP, counted before validation). */
  const rulesWritten = async (sample: Sample) =>
    (await apps.redis().client().keys(`${sample.keyPrefix}:*`)).map((k) => k.split(':')[1]).filter((rule) => rule !== 'default').sort();

  it('writes no key of the SMS rules for an invalid phone number', async () => {
    const sample = shared();
    await sendCode(sample, { phone: 'not-a-phone' }).expect(400);
    expect(await rulesWritten(sample)).toEqual([]);
  });

  it('writes the keys of the three SMS rules for a valid one', async () => {
    const sample = shared();
    await sendCode(sample).expect(200);
    // And the provider's own limit, which the send waited on (PacedSmsProvider).
    expect(await rulesWritten(sample)).toEqual(['sms-day', 'sms-hour', 'sms-minute', 'sms-provider']);
  });
});
