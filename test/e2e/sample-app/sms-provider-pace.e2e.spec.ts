import request from 'supertest';
import { RateLimitService } from '../../../lib/index.js';
import { SMS_PROVIDER_MAX_WAIT_MS } from '../../../sample-app/src/sms/paced-sms.provider.js';
import { StubSmsProvider } from '../../../sample-app/src/sms/stub-sms.provider.js';
import { SAMPLE_STORES, sampleAppsOn } from './support/sample-app.js';

/** Resolves once `condition` holds, looking every 10 ms (the test's timeout bounds it). */
async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 10));
}

/**
 * The sample's outgoing SMS calls keep to the provider's own limit (`sms-provider`, per second) by waiting
 * (PacedSmsProvider, `waitToConsume`): a send over it is held, not refused, and goes out once its window has passed.
 */
describe.each(SAMPLE_STORES)("POST /sms/code over the SMS provider's limit, on the %s store", (store) => {
  const apps = sampleAppsOn(store);

  it('holds the send over the limit until the next second of the clock, then sends it: 200, never 429', async () => {
    const sample = await apps.start({ RATE_LIMIT_SMS_PROVIDER_LIMIT: '2' });
    const limits = sample.app.get(RateLimitService);
    const outbox = sample.app.get(StubSmsProvider).sent;
    const statuses: number[] = [];
    const phones = ['+14155550101', '+14155550102', '+14155550103'];
    const answers = phones.map((phone) =>
      request(sample.server)
        .post('/sms/code')
        .send({ phone })
        .then((res) => statuses.push(res.status)),
    );
    // Two sends fill the provider's second; the third waits in the queue. The clock stands still, so it goes on waiting.
    await until(() => statuses.length === 2 && limits.waitingCalls === 1);
    expect({ statuses, sent: outbox.length }).toEqual({ statuses: [200, 200], sent: 2 });
    sample.clock.advance(1_000);
    await Promise.all(answers);
    expect({ statuses, sent: outbox.length, waiting: limits.waitingCalls }).toEqual({ statuses: [200, 200, 200], sent: 3, waiting: 0 });
  });

  it(`fails a send whose wait would pass ${SMS_PROVIDER_MAX_WAIT_MS} ms at once with 502, and refunds the phone's budget`, async () => {
    // One send per minute: the clock is moved to 40 s before a minute's end, so a second send would wait 40 s.
    const sample = await apps.start({ RATE_LIMIT_SMS_PROVIDER_LIMIT: '1', RATE_LIMIT_SMS_PROVIDER_WINDOW: '1m' });
    sample.clock.advance(20_000 - (sample.clock.now() % 60_000) + (sample.clock.now() % 60_000 > 20_000 ? 60_000 : 0));
    expect(sample.clock.now() % 60_000).toBe(20_000);
    await request(sample.server).post('/sms/code').send({ phone: '+14155550101' }).expect(200);
    await request(sample.server).post('/sms/code').send({ phone: '+14155550102' }).expect(502);
    expect(sample.app.get(StubSmsProvider).sent).toHaveLength(1);
    // Refunded: the phone's minute rule has its one send back.
    expect((await sample.app.get(RateLimitService).peek('phone:+14155550102', 'sms-minute')).allowed).toBe(true);
  });
});
