import type { INestApplication } from '@nestjs/common';
import { ExpressAdapter } from '@nestjs/platform-express';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { Test } from '@nestjs/testing';
import { mkdtempSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RateLimitModule, RateLimitService, type RateLimitModuleOptions } from '../../lib/index.js';
import { ManualClock } from '../support/manual.clock.js';
import { IpController, ONE_PER_MINUTE } from './fixtures/client-ip/ip.controller.js';
import { PLATFORMS, type Platform } from './support/http-app.js';

/**
 * Requests that arrive with no client IP: an app listening on a unix domain socket (as behind nginx or a sidecar
 * proxy on the same host), where the socket has no remote address. Their identity can only come from the proxy's
 * X-Forwarded-For, under a trust the app configured; without one, nothing tells two clients apart, and they must
 * never be pooled into one bucket that one of them can spend for all the others (README, "Keys").
 */
const UNKNOWN_KEY = 'ip:IpController.limited|ip:unknown';

describe.each(PLATFORMS)('requests with no client IP (a unix socket server) on %s', (platform: Platform) => {
  let app: INestApplication | undefined;
  let dir: string;
  let socketPath: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'rl-no-ip-'));
    socketPath = join(dir, 'app.sock');
  });
  afterEach(async () => {
    await app?.close();
    app = undefined;
    rmSync(dir, { recursive: true, force: true });
  });

  async function start(options: RateLimitModuleOptions, platformTrustProxy = false): Promise<RateLimitService> {
    const moduleRef = await Test.createTestingModule({
      imports: [RateLimitModule.forRoot({ globalGuard: true, store: 'memory', clock: new ManualClock().now, ...options })],
      controllers: [IpController],
    }).compile();
    app =
      platform === 'express'
        ? moduleRef.createNestApplication(new ExpressAdapter(), { logger: false })
        : moduleRef.createNestApplication(new FastifyAdapter({ trustProxy: platformTrustProxy }), { logger: false });
    if (platform === 'express' && platformTrustProxy) app.getHttpAdapter().getInstance().set('trust proxy', true);
    await app.listen(socketPath);
    return app.get(RateLimitService);
  }

  /** GET /ip over the unix socket (one per minute per client), as a proxy would forward it for `forwardedFor`. */
  function get(forwardedFor?: string): Promise<number> {
    return new Promise((resolve, reject) => {
      const req = httpRequest({ socketPath, path: '/ip', headers: forwardedFor ? { 'x-forwarded-for': forwardedFor } : {} }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode!));
      });
      req.on('error', reject);
      req.end();
    });
  }

  it('counts each forwarded client apart when the platform trusts the proxy in front of the socket', async () => {
    await start({}, true);
    expect([await get('203.0.113.1'), await get('203.0.113.2'), await get('203.0.113.1')]).toEqual([200, 200, 429]);
  });

  it('counts each forwarded client apart with the module option trustProxy: true, as the platform\'s trust does', async () => {
    await start({ trustProxy: true });
    expect([await get('203.0.113.1'), await get('203.0.113.2'), await get('203.0.113.1')]).toEqual([200, 200, 429]);
  });

  it('never pools requests without a client IP into one bucket: one client\'s request does not spend another\'s', async () => {
    const service = await start({});
    const first = await get();
    const second = await get('203.0.113.2');
    // Refused as undecidable (500, one logged error naming trustProxy), as an empty getTracker answer is.
    expect(first).toBe(500);
    expect(second).toBe(500);
    expect((await service.peek(UNKNOWN_KEY, ONE_PER_MINUTE, 0)).remaining).toBe(ONE_PER_MINUTE.limit);
  });
});
