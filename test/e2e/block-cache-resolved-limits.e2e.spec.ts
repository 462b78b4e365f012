import { Controller, Get, type ExecutionContext } from '@nestjs/common';
import { RateLimit } from '../../lib/index.js';
import { PLATFORMS } from './support/http-app.js';
import { statuses, useGuardApps, useRedisServer } from './fixtures/guard-app.js';

/** The plan of each API key, as a plan service would answer; a test upgrades its own key. */
const plans = new Map<string, 'free' | 'pro'>();
const planOf = (context: ExecutionContext) => plans.get(context.switchToHttp().getRequest<{ headers: Record<string, string> }>().headers['x-api-key']) ?? 'free';

@Controller('plan')
class PlanController {
  /** The README's plan example: 3 an hour on the free plan, 10,000 on pro, per API key. */
  @Get()
  @RateLimit({ name: 'plan', key: 'header:x-api-key', window: '1h', limit: (ctx: ExecutionContext) => (planOf(ctx) === 'pro' ? 10_000 : 3) })
  get() {
    return { ok: true };
  }

  /** 3 per window on both plans, but the pro plan's window is a minute, the free plan's an hour. */
  @Get('window')
  @RateLimit({ name: 'plan-window', key: 'header:x-api-key', limit: 3, algorithm: 'fixed-window', window: (ctx: ExecutionContext) => (planOf(ctx) === 'pro' ? '1m' : '1h') })
  window() {
    return { ok: true };
  }
}

const redis = useRedisServer();

// The block cache is used only with a Redis store: the memory store decides a refusal as fast as the cache would.
describe.each(PLATFORMS)('the block cache and limits resolved per request, with a Redis store, on %s', (platform) => {
  const start = useGuardApps(platform, 'redis', redis);
  let key = 0;
  const nextKey = () => `key-${platform}-${++key}`;

  it('admits a client that upgraded its plan on its next request, not its cached free-plan refusal', async () => {
    const { http, service } = await start({ globalGuard: true }, { controllers: [PlanController] });
    const apiKey = nextKey();
    const send = () => http().get('/plan').set('x-api-key', apiKey);
    expect(await statuses(5, send)).toEqual([200, 200, 200, 429, 429]);
    expect(service.blockCache?.size).toBe(1);
    plans.set(apiKey, 'pro');
    expect(await statuses(5, send)).toEqual([200, 200, 200, 200, 200]);
  });

  it('still refuses from the block cache a client whose resolved limit is unchanged', async () => {
    const { http, service } = await start({ globalGuard: true }, { controllers: [PlanController] });
    const apiKey = nextKey();
    const send = () => http().get('/plan').set('x-api-key', apiKey);
    expect(await statuses(5, send)).toEqual([200, 200, 200, 429, 429]);
    // The fifth request was the cache's: the refusal of the fourth answered it without a store call.
    expect(service.blockCache?.hits).toBe(1);
  });

  it('admits a client whose resolved window changed on its next request, not its cached refusal under the old window', async () => {
    const { http } = await start({ globalGuard: true }, { controllers: [PlanController] });
    const apiKey = nextKey();
    const send = () => http().get('/plan/window').set('x-api-key', apiKey);
    expect(await statuses(4, send)).toEqual([200, 200, 200, 429]);
    plans.set(apiKey, 'pro');
    // A fixed window of a minute counts apart from the hour's: 3 more, whatever the hour's count.
    expect(await statuses(4, send)).toEqual([200, 200, 200, 429]);
  });
});
