import { Controller, Get, Injectable, UseGuards, type ExecutionContext, type INestApplication, type LoggerService, type ModuleMetadata } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { ExpressAdapter } from '@nestjs/platform-express';
import { Test } from '@nestjs/testing';
import request from 'supertest';
import { RateLimitGuard, RateLimitModule, type RateLimitPolicy } from '../../lib/index.js';
import { uniquePrefix } from '../support/redis-server.js';

/** The subclass of the README's "Extending the guard": clients counted per tenant. */
@Injectable()
class TenantRateLimitGuard extends RateLimitGuard {
  protected override getTracker(request: any, context: ExecutionContext) {
    return request.headers['x-tenant-id'] ?? super.getTracker(request, context);
  }
  protected override generateKey(context: ExecutionContext, tracker: string, policy: RateLimitPolicy) {
    return `tenant|${super.generateKey(context, tracker, policy)}`;
  }
}

@Controller()
class ItemsController {
  @Get('items')
  list() {
    return { ok: true };
  }
}

@Controller('guarded')
@UseGuards(RateLimitGuard)
class GuardedController {
  @Get()
  list() {
    return { ok: true };
  }
}

/** Keeps the warnings the application logs, from its start-up on. */
class WarningsLogger implements LoggerService {
  readonly warnings: string[] = [];
  warn(message: unknown) {
    this.warnings.push(String(message));
  }
  log() {}
  error() {}
  debug() {}
  verbose() {}
}

describe('rate-limit guards registered twice', () => {
  let app: INestApplication | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  async function start(metadata: ModuleMetadata, globalGuard: boolean) {
    const logger = new WarningsLogger();
    const moduleRef = await Test.createTestingModule({
      ...metadata,
      imports: [RateLimitModule.forRoot({ globalGuard, keyPrefix: uniquePrefix('guards'), defaultRule: { limit: 3, window: '1m' } }), ...(metadata.imports ?? [])],
    }).compile();
    app = moduleRef.createNestApplication(new ExpressAdapter(), { logger });
    await app.listen(0, '127.0.0.1');
    return { warnings: logger.warnings.filter((w) => w.includes('rate-limit guard')), server: app.getHttpServer() };
  }

  const tenant = (server: unknown, id: string) => request(server as never).get('/items').set('x-tenant-id', id);

  it('warns at start-up that a RateLimitGuard subclass registered as APP_GUARD beside globalGuard: true counts every request twice, naming both', async () => {
    const { warnings, server } = await start({ controllers: [ItemsController], providers: [{ provide: APP_GUARD, useClass: TenantRateLimitGuard }] }, true);
    expect(warnings).toEqual([
      '2 rate-limit guards run on every request: RateLimitGuard (globalGuard: true of RateLimitModule) and TenantRateLimitGuard (APP_GUARD in RootTestModule). Each counts every request, so clients are refused at a fraction of their limits. To use a subclass of RateLimitGuard, drop globalGuard: true from RateLimitModule and register only the subclass: { provide: APP_GUARD, useClass: YourGuard }.',
    ]);
    // What it warns of: the module's guard counts per IP besides the subclass's per tenant.
    for (const id of ['a', 'b', 'c']) await tenant(server, id).expect(200);
    await tenant(server, 'd').expect(429);
  });

  it('does not warn when the subclass is registered alone, which counts each request once, per tenant', async () => {
    const { warnings, server } = await start({ controllers: [ItemsController], providers: [{ provide: APP_GUARD, useClass: TenantRateLimitGuard }] }, false);
    expect(warnings).toEqual([]);
    for (let i = 0; i < 3; i++) await tenant(server, 'a').expect(200);
    await tenant(server, 'a').expect(429);
    await tenant(server, 'b').expect(200);
  });

  it('warns at start-up of @UseGuards(RateLimitGuard) on a controller beside globalGuard: true, naming the controller', async () => {
    const { warnings } = await start({ controllers: [ItemsController, GuardedController] }, true);
    expect(warnings).toEqual([
      '@UseGuards applies a rate-limit guard to GuardedController, where RateLimitGuard (globalGuard: true of RateLimitModule) already runs on every request: their requests are counted twice. Remove those @UseGuards, or the global registration.',
    ]);
  });

  it('does not warn of @UseGuards(RateLimitGuard) without a global rate-limit guard', async () => {
    expect((await start({ controllers: [ItemsController, GuardedController] }, false)).warnings).toEqual([]);
  });
});
