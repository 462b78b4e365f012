import { PLATFORMS } from './support/http-app.js';
import { policyNames, remaining, STORES, useGuardApps, useRedisServer, type GuardApp } from './fixtures/guard-app.js';
import { REQUESTS, SMS_HOUR, SMS_MINUTE, SmsController } from './fixtures/stacked/sms.controller.js';

const redis = useRedisServer();
const PHONE = '+15550001';
const sendKey = (phone: string) => `sms:SmsController.send|body:phone:${phone}`;
const bulkKey = (phone: string) => `sms:SmsController.bulk|body:phone:${phone}`;

describe.each(PLATFORMS)('stacked rules on %s', (platform) => {
  describe.each(STORES)('with the %s store', (store) => {
    const start = useGuardApps(platform, store, redis);
    const startSms = () => start({ globalGuard: true }, { controllers: [SmsController] });
    const send = ({ http }: GuardApp, phone = PHONE) => http().post('/sms/send').send({ phone });
    const bulk = ({ http }: GuardApp, phone = PHONE) => http().post('/sms/bulk').send({ phone });

    describe('an SMS route limited per minute and per hour', () => {
      it('admits a request that every rule admits and charges each of them', async () => {
        const sms = await startSms();
        const res = await send(sms).expect(202);
        expect(policyNames(res)).toEqual(['sms-minute', 'sms-hour']);
        expect(remaining(res, 'sms-minute')).toBe(0);
        expect(remaining(res, 'sms-hour')).toBe(4);
      });

      it('refuses a request that one of the rules refuses', async () => {
        const sms = await startSms();
        await send(sms).expect(202);
        await send(sms).expect(429);
      });

      it('charges the hour rule nothing for a request the minute rule refused', async () => {
        const sms = await startSms();
        await send(sms).expect(202);
        await send(sms).expect(429);
        sms.clock.advance(61_000);
        const res = await send(sms).expect(202);
        expect(remaining(res, 'sms-hour')).toBe(3);
      });

      it('charges the minute rule nothing for a request the hour rule refused', async () => {
        const sms = await startSms();
        for (let i = 0; i < 5; i++) {
          await send(sms).expect(202);
          sms.clock.advance(61_000);
        }
        await send(sms).expect(429);
        const minute = await sms.service.peek(sendKey(PHONE), SMS_MINUTE);
        expect(minute.allowed).toBe(true);
        const hour = await sms.service.peek(sendKey(PHONE), SMS_HOUR);
        expect(hour.allowed).toBe(false);
      });

      it('tells the client to wait for the rule that refused', async () => {
        const sms = await startSms();
        for (let i = 0; i < 5; i++) {
          await send(sms).expect(202);
          sms.clock.advance(61_000);
        }
        const res = await send(sms).expect(429);
        // The first SMS (5 x 61 s ago) leaves the hour's log in 3600 - 305 s.
        expect(res.body.retryAfter).toBe(3295);
        expect(res.headers['retry-after']).toBe('3295');
      });

      it('counts each phone number on budgets of its own', async () => {
        const sms = await startSms();
        await send(sms, '+15550001').expect(202);
        await send(sms, '+15550001').expect(429);
        await send(sms, '+15550002').expect(202);
      });
    });

    describe('stacked rules with different costs', () => {
      it('charges each rule its own cost', async () => {
        const sms = await startSms();
        const first = await bulk(sms).expect(202);
        expect([remaining(first, 'requests'), remaining(first, 'units')]).toEqual([9, 6]);
        const second = await bulk(sms).expect(202);
        expect([remaining(second, 'requests'), remaining(second, 'units')]).toEqual([8, 2]);
      });

      it('refuses once the costlier rule cannot pay, charging the cheaper rule nothing', async () => {
        const sms = await startSms();
        await bulk(sms).expect(202);
        await bulk(sms).expect(202);
        await bulk(sms).expect(429);
        const requests = await sms.service.peek(bulkKey(PHONE), REQUESTS);
        expect(requests.remaining).toBe(7);
      });
    });
  });
});
