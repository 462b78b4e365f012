import { jest } from '@jest/globals';
import { Controller, Get, Logger, type INestApplication } from '@nestjs/common';
import request from 'supertest';
import { RateLimitModule, type RateLimitModuleOptions } from '../../lib/index.js';
import { resetForwardedForWarning } from '../../lib/http/forwarded-for.warning.js';
import { uniquePrefix } from '../support/redis-server.js';
import { PLATFORMS, startApp, type AppOptions } from './support/http-app.js';

@Controller()
class PingController {
  @Get('ping')
  ping() {
    return { ok: true };
  }
}

describe.each(PLATFORMS)('the X-Forwarded-For warning on %s', (platform) => {
  let app: INestApplication | undefined;
  let warnings: string[];

  async function start(options: Partial<RateLimitModuleOptions> = {}, appOptions: AppOptions = {}) {
    app = await startApp(
      platform,
      {
        imports: [RateLimitModule.forRoot({ keyPrefix: uniquePrefix('xff'), defaultRule: { limit: 100, window: '1m' }, globalGuard: true, ...options })],
        controllers: [PingController],
      },
      appOptions,
    );
    return app.getHttpServer();
  }

  beforeEach(() => {
    // The warning is once per process: each test starts as a fresh process would.
    resetForwardedForWarning();
    warnings = [];
    jest.spyOn(Logger.prototype, 'warn').mockImplementation(function (this: Logger, message: unknown) {
      if ((this as unknown as { context?: string }).context === 'RateLimit') warnings.push(String(message));
    });
  });

  afterEach(async () => {
    jest.restoreAllMocks();
    await app?.close();
    app = undefined;
  });

  it('warns once, naming trustProxy, when requests carry X-Forwarded-For and no proxy is trusted', async () => {
    const server = await start();
    await request(server).get('/ping').set('X-Forwarded-For', '203.0.113.1').expect(200);
    await request(server).get('/ping').set('X-Forwarded-For', '203.0.113.2').expect(200);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('X-Forwarded-For');
    expect(warnings[0]).toContain('trustProxy');
  });

  it('names the platform setting too', async () => {
    const server = await start();
    await request(server).get('/ping').set('X-Forwarded-For', '203.0.113.1').expect(200);
    expect(warnings[0]).toContain(platform === 'express' ? "app.set('trust proxy'" : 'FastifyAdapter({ trustProxy');
  });

  it('does not warn about requests without X-Forwarded-For', async () => {
    const server = await start();
    await request(server).get('/ping').expect(200);
    expect(warnings).toEqual([]);
  });

  it('does not warn when the module sets trustProxy, to any value', async () => {
    const server = await start({ trustProxy: false });
    await request(server).get('/ping').set('X-Forwarded-For', '203.0.113.1').expect(200);
    expect(warnings).toEqual([]);
  });

  it('does not warn when the platform trusts proxies', async () => {
    const server = await start({}, { platformTrustProxy: true });
    await request(server).get('/ping').set('X-Forwarded-For', '203.0.113.1').expect(200);
    expect(warnings).toEqual([]);
  });
});
