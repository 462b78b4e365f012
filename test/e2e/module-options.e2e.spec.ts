import { Controller, Get, Injectable, Module, UseGuards, type ConfigurableModuleOptionsFactory, type INestApplication } from '@nestjs/common';
import { ConfigModule, ConfigService, registerAs } from '@nestjs/config';
import request from 'supertest';
import { RateLimitGuard, RateLimitModule, RateLimitService, type RateLimitModuleOptions } from '../../lib/index.js';
import { ManualClock } from '../support/manual.clock.js';
import { uniquePrefix } from '../support/redis-server.js';
import { PLATFORMS, startApp } from './support/http-app.js';

@Controller()
class PingController {
  @Get('ping')
  ping() {
    return { ok: true };
  }
}

@Controller('guarded')
@UseGuards(RateLimitGuard)
class GuardedController {
  @Get()
  get() {
    return { ok: true };
  }
}

/** Never advanced; on a whole minute, so that the default sliding window's cells line up and waits are exact. */
const clock = new ManualClock(1_700_000_040_000);

const limitsConfig = () => ConfigModule.forRoot({ ignoreEnvFile: true, load: [registerAs('limits', () => ({ ping: 2 }))] });

/** Builds the module options from ConfigService, for `useClass` and `useExisting`. */
@Injectable()
class RateLimitOptionsFactory implements ConfigurableModuleOptionsFactory<RateLimitModuleOptions, 'createRateLimitOptions'> {
  calls = 0;
  constructor(private readonly config: ConfigService) {}
  createRateLimitOptions(): RateLimitModuleOptions {
    this.calls++;
    return { keyPrefix: uniquePrefix('opt'), clock: clock.now, defaultRule: { limit: this.config.get<number>('limits.ping')!, window: '1m' } };
  }
}

@Module({ imports: [ConfigModule], providers: [RateLimitOptionsFactory], exports: [RateLimitOptionsFactory] })
class RateLimitOptionsModule {}

/** A module that injects RateLimitService without importing RateLimitModule. */
@Controller('feature')
class FeatureController {
  constructor(private readonly rateLimit: RateLimitService) {}
  @Get()
  async get() {
    await this.rateLimit.enforce('feature-user', 'feature');
    return { ok: true };
  }
}

@Module({ controllers: [FeatureController] })
class FeatureModule {}

/** A module that uses RateLimitGuard without importing RateLimitModule (the guard's dependencies come from it). */
@Controller('feature-guarded')
@UseGuards(RateLimitGuard)
class FeatureGuardedController {
  @Get()
  get() {
    return { ok: true };
  }
}

@Module({ controllers: [FeatureGuardedController] })
class FeatureGuardedModule {}

async function expectLimitedAt(server: unknown, path: string, limit: number) {
  for (let i = 0; i < limit; i++) await request(server as never).get(path).expect(200);
  const refused = await request(server as never).get(path).expect(429);
  expect(refused.body).toEqual({ statusCode: 429, message: 'Too Many Requests', retryAfter: 60 });
}

describe.each(PLATFORMS)('module options on %s', (platform) => {
  let app: INestApplication | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  it('forRoot without globalGuard limits only the routes that use RateLimitGuard', async () => {
    app = await startApp(platform, {
      imports: [RateLimitModule.forRoot({ keyPrefix: uniquePrefix('opt'), clock: clock.now, defaultRule: { limit: 1, window: '1m' } })],
      controllers: [PingController, GuardedController],
    });
    const server = app.getHttpServer();
    for (let i = 0; i < 3; i++) await request(server).get('/ping').expect(200);
    await expectLimitedAt(server, '/guarded', 1);
  });

  it('forRootAsync builds the options with useFactory from an injected ConfigService', async () => {
    app = await startApp(platform, {
      imports: [
        limitsConfig(),
        RateLimitModule.forRootAsync({
          imports: [ConfigModule],
          inject: [ConfigService],
          useFactory: async (config: ConfigService) => ({
            keyPrefix: uniquePrefix('opt'),
            clock: clock.now,
            defaultRule: { limit: config.get<number>('limits.ping')!, window: '1m' },
          }),
          globalGuard: true,
        }),
      ],
      controllers: [PingController],
    });
    const first = await request(app.getHttpServer()).get('/ping').expect(200);
    expect(first.headers['ratelimit-policy']).toBe('"default";q=2;w=60');
    await request(app.getHttpServer()).get('/ping').expect(200);
    await request(app.getHttpServer()).get('/ping').expect(429);
  });

  it('forRootAsync builds the options with useClass, a class implementing createRateLimitOptions()', async () => {
    app = await startApp(platform, {
      imports: [limitsConfig(), RateLimitModule.forRootAsync({ imports: [ConfigModule], useClass: RateLimitOptionsFactory, globalGuard: true })],
      controllers: [PingController],
    });
    await expectLimitedAt(app.getHttpServer(), '/ping', 2);
  });

  it('forRootAsync takes the options from an existing provider with useExisting', async () => {
    app = await startApp(platform, {
      imports: [
        limitsConfig(),
        RateLimitOptionsModule,
        RateLimitModule.forRootAsync({ imports: [RateLimitOptionsModule], useExisting: RateLimitOptionsFactory, globalGuard: true }),
      ],
      controllers: [PingController],
    });
    // The very instance the options module owns was asked, once.
    expect(app.select(RateLimitOptionsModule).get(RateLimitOptionsFactory).calls).toBe(1);
    await expectLimitedAt(app.getHttpServer(), '/ping', 2);
  });

  it('is global by default: RateLimitService is injectable in a module that does not import RateLimitModule', async () => {
    app = await startApp(platform, {
      imports: [RateLimitModule.forRoot({ keyPrefix: uniquePrefix('opt'), clock: clock.now, rules: { feature: { limit: 2, window: '1m' } } }), FeatureModule],
    });
    await expectLimitedAt(app.getHttpServer(), '/feature', 2);
  });

  it('is global by default: @UseGuards(RateLimitGuard) works in a feature module that does not import RateLimitModule', async () => {
    app = await startApp(platform, {
      imports: [RateLimitModule.forRoot({ keyPrefix: uniquePrefix('opt'), clock: clock.now, defaultRule: { limit: 2, window: '1m' } }), FeatureGuardedModule],
    });
    await expectLimitedAt(app.getHttpServer(), '/feature-guarded', 2);
  });

  it('with isGlobal: false, a module that does not import RateLimitModule cannot inject RateLimitService', async () => {
    const starting = startApp(platform, {
      imports: [RateLimitModule.forRoot({ rules: { feature: { limit: 2, window: '1m' } }, isGlobal: false }), FeatureModule],
    });
    await expect(starting).rejects.toThrow(/RateLimitService/);
  });

  it('is global by default with forRootAsync too', async () => {
    app = await startApp(platform, {
      imports: [
        RateLimitModule.forRootAsync({ useFactory: () => ({ keyPrefix: uniquePrefix('opt'), clock: clock.now, rules: { feature: { limit: 1, window: '1m' } } }) }),
        FeatureModule,
      ],
    });
    await expectLimitedAt(app.getHttpServer(), '/feature', 1);
  });
});
