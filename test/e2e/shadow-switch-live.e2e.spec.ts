import { Controller, Get, type INestApplication } from '@nestjs/common';
import { ConfigModule, ConfigService, registerAs } from '@nestjs/config';
import request from 'supertest';
import { MemoryStore, RateLimit, RateLimitModule, RedisStore, type Decision, type MultiDecision, type RateLimitRule, type RateLimitStore, type RuleKey } from '../../lib/index.js';
import { ManualClock } from '../support/manual.clock.js';
import { uniquePrefix } from '../support/redis-server.js';
import { PATIENT_TIMEOUT_MS } from '../support/store-timeout.js';
import { STORES, useRedisServer, type StoreKind } from './fixtures/guard-app.js';
import { Hold } from './support/hold.js';
import { PLATFORMS, startApp } from './support/http-app.js';

/**
 * A rule switched from shadow to enforce through ConfigService while requests are in flight. The switch applies
 * from the next request on (README): a request already being decided stays in shadow (admitted whatever the store
 * says), one sent after the switch is decided in force (refused past the limit). The test holds the requests in the
 * store call, so that which side of the switch each one is on, and the order in which the store decides them, are
 * known, not timed.
 */

/** A real store (memory, or Redis) whose decisions wait for the test while `hold` is held. */
class HeldStore implements RateLimitStore {
  readonly hold = new Hold();
  constructor(private readonly inner: RateLimitStore) {}
  async consume(key: string, rule: RateLimitRule, cost?: number): Promise<Decision> {
    await this.hold.pass();
    return this.inner.consume(key, rule, cost);
  }
  async consumeAll(entries: readonly RuleKey[], cost?: number): Promise<MultiDecision> {
    await this.hold.pass();
    return this.inner.consumeAll(entries, cost);
  }
  peek(key: string, rule: RateLimitRule, cost?: number): Promise<Decision> {
    return this.inner.peek(key, rule, cost);
  }
  refund(key: string, rule: RateLimitRule, cost?: number): Promise<void> {
    return this.inner.refund(key, rule, cost);
  }
  reset(key: string, rule: RateLimitRule): Promise<void> {
    return this.inner.reset(key, rule);
  }
}

@Controller('search')
class SearchController {
  /** The named rule `search` of config (3 per minute), counted per X-User. */
  @Get()
  @RateLimit({ name: 'search', key: 'header:x-user' })
  search() {
    return { ok: true };
  }
}

const LIMIT = 3;
const SWITCHES = [
  ['the module-wide mode (rateLimit.mode)', { mode: 'shadow', rules: { search: { limit: LIMIT, window: '1m', algorithm: 'fixed-window' } } }, 'rateLimit.mode'],
  ['the rule\'s own mode (rateLimit.rules.search.mode)', { rules: { search: { limit: LIMIT, window: '1m', algorithm: 'fixed-window', mode: 'shadow' } } }, 'rateLimit.rules.search.mode'],
] as const;

const redis = useRedisServer();

describe.each(PLATFORMS)('a live switch from shadow to enforce under concurrent traffic on %s', (platform) => {
  describe.each(STORES)('with the %s store', (kind: StoreKind) => {
    let app: INestApplication | undefined;
    afterEach(async () => {
      await app?.close();
      app = undefined;
    });

    async function start(namespace: Record<string, unknown>) {
      const clock = new ManualClock();
      const prefix = uniquePrefix('sw');
      const inner = kind === 'memory' ? new MemoryStore({ clock: clock.now, keyPrefix: prefix }) : new RedisStore(redis(), { clock: clock.now, keyPrefix: prefix });
      const store = new HeldStore(inner);
      app = await startApp(platform, {
        imports: [
          ConfigModule.forRoot({ ignoreEnvFile: true, load: [registerAs('rateLimit', () => structuredClone(namespace))] }),
          RateLimitModule.forRootAsync({
            imports: [ConfigModule],
            inject: [ConfigService],
            useFactory: (config: ConfigService) => ({ config, clock: clock.now, keyPrefix: prefix, store, blockCache: false, timeoutMs: PATIENT_TIMEOUT_MS }),
            globalGuard: true,
          }),
        ],
        controllers: [SearchController],
      });
      const server = app.getHttpServer();
      const send = (count: number) =>
        Array.from({ length: count }, () =>
          request(server)
            .get('/search')
            .set('x-user', 'u1')
            .then((res) => res),
        );
      return { clock, store, config: app.get(ConfigService), send };
    }

    it.each(SWITCHES)('switching %s: the requests in flight stay in shadow, those sent after it are admitted only up to the limit', async (_label, namespace, path) => {
      const { store, config, send } = await start(namespace);
      // Two requests decided in shadow, held in the store; then the switch; then five more, held there too.
      store.hold.held = true;
      const inShadow = send(2);
      await store.hold.until(2);
      config.set(path, 'enforce');
      const inForce = send(5);
      await store.hold.until(7);
      // Released together, in the order they reached the store: the two count 2 of 3, the five get the last unit.
      store.hold.open();
      const shadowed = await Promise.all(inShadow);
      const enforced = await Promise.all(inForce);
      expect(shadowed.map((res) => res.status)).toEqual([200, 200]);
      expect(shadowed.every((res) => res.headers['ratelimit'] === undefined)).toBe(true);
      expect(enforced.map((res) => res.status).sort()).toEqual([200, 429, 429, 429, 429]);
      for (const res of enforced) expect(res.headers['ratelimit-policy']).toBe(`"search";q=${LIMIT};w=60`);
    });

    it.each(SWITCHES)('switching %s: requests in flight past the limit stay admitted, while those sent after it are all refused', async (_label, namespace, path) => {
      const { clock, store, config, send } = await start(namespace);
      store.hold.held = true;
      const inShadow = send(5);
      await store.hold.until(5);
      config.set(path, 'enforce');
      const inForce = send(3);
      await store.hold.until(8);
      store.hold.open();
      // Five in shadow, two of them past the limit of 3: none refused. The three after the switch: none admitted.
      expect((await Promise.all(inShadow)).map((res) => res.status)).toEqual([200, 200, 200, 200, 200]);
      const enforced = await Promise.all(inForce);
      expect(enforced.map((res) => res.status)).toEqual([429, 429, 429]);
      expect(enforced.every((res) => Number(res.headers['retry-after']) > 0)).toBe(true);
      // In a new window the rule is still enforced: exactly 3 of 5 concurrent requests admitted.
      clock.advance(60_000);
      expect((await Promise.all(send(5))).map((res) => res.status).sort()).toEqual([200, 200, 200, 429, 429]);
    });

    it.each(SWITCHES)('switching %s between two waves: the shadow wave past the limit all admitted, the next wave all refused, its units spent', async (_label, namespace, path) => {
      const { store, config, send } = await start(namespace);
      // The first wave, in shadow and in flight together: twice the limit, every one admitted.
      store.hold.held = true;
      const first = send(2 * LIMIT);
      await store.hold.until(2 * LIMIT);
      store.hold.open();
      expect((await Promise.all(first)).map((res) => res.status)).toEqual(new Array(2 * LIMIT).fill(200));

      config.set(path, 'enforce');
      // The budget the shadow wave counted stays spent: the whole second wave is refused.
      expect((await Promise.all(send(LIMIT))).map((res) => res.status)).toEqual(new Array(LIMIT).fill(429));
    });
  });
});
