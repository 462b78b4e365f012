import { Controller, Get, type INestApplication, type LoggerService } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import request from 'supertest';
import { RateLimit, RateLimitConfigError, RateLimitModule, type RateLimitModuleOptions } from '../../lib/index.js';
import { validateModuleOptions } from '../../lib/config/module-options.validator.js';
import { freePort, startRedis, uniquePrefix, type TestRedis } from '../support/redis-server.js';
import { waitFor } from './support/resilient-app.js';

@Controller()
class PingController {
  @Get('ping')
  @RateLimit('1m', 100, 'sliding-window')
  ping() {
    return { ok: true };
  }
}

/** Every line the app logs, "<level> <message>". */
class CapturingLogger implements LoggerService {
  readonly lines: string[] = [];
  log = (m: unknown) => this.lines.push(`log ${String(m)}`);
  error = (m: unknown) => this.lines.push(`error ${String(m)}`);
  warn = (m: unknown) => this.lines.push(`warn ${String(m)}`);
  debug = () => undefined;
  verbose = () => undefined;
}

// Errors retrying cannot fix (a password, a database index) used to let the app start and run on the failure
// policy for ever, logging "Connection is closed". They stop the start-up with the real reason, unless
// `startDegraded` is set; a transient one (Redis not up yet) still lets the app start.
describe('Redis errors that cannot fix themselves', () => {
  let redis: TestRedis;
  let app: INestApplication | undefined;
  let logger: CapturingLogger;
  beforeAll(async () => {
    redis = await startRedis({ own: true, args: ['--requirepass', 's3cret', '--databases', '2'] });
  });
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });
  afterAll(() => redis.stop());

  async function boot(store: string, options: RateLimitModuleOptions = {}): Promise<INestApplication> {
    logger = new CapturingLogger();
    const moduleRef = await Test.createTestingModule({
      imports: [RateLimitModule.forRoot({ store, keyPrefix: uniquePrefix('perm'), metrics: false, globalGuard: true, failurePolicy: 'closed', ...options })],
      controllers: [PingController],
    }).compile();
    const created = moduleRef.createNestApplication({ logger });
    try {
      await created.init();
    } catch (error) {
      await created.close().catch(() => undefined);
      throw error;
    }
    return (app = created);
  }
  const url = (auth: string, db = '') => `redis://${auth}127.0.0.1:${redis.port}${db}`;

  it.each([
    ['no password', '', '', /NOAUTH/],
    ['a wrong password', ':wrong@', '', /WRONGPASS/],
    ['a database index the server does not have', ':s3cret@', '/5', /ERR DB index is out of range/],
  ])('stops the start-up on %s, with the reason Redis gave', async (_what, auth, db, reason) => {
    const error = await boot(url(auth, db)).then(() => new Error('the application started'), (e: unknown) => e as Error);
    expect(error).toBeInstanceOf(RateLimitConfigError);
    expect(error.message).toMatch(/"store"/);
    expect(error.message).toMatch(reason);
    expect(error.message).not.toMatch(/s3cret|wrong/);
  });

  it('refuses a URL whose database path is not a number before connecting', async () => {
    await expect(boot(url(':s3cret@', '/abc'))).rejects.toThrow(/Invalid rate limit option "store": "redis:\/\/\*\*\*@127\.0\.0\.1:\d+\/abc" \(expected .*database number/);
  });

  it('starts degraded when startDegraded is set, deciding by the failure policy and logging the reason', async () => {
    const started = await boot(url(':wrong@'), { startDegraded: true });
    await request(started.getHttpServer()).get('/ping').expect(429);
    expect(logger.lines.some((line) => /^error .*WRONGPASS/.test(line))).toBe(true);
    expect(logger.lines.join('\n')).not.toMatch(/Connection is closed/);
  });

  it('refuses a startDegraded that is not a boolean, naming the option', () => {
    expect(() => validateModuleOptions({ startDegraded: 'yes' as unknown as boolean })).toThrow('Invalid rate limit option "startDegraded": "yes" (expected true or false)');
  });

  it('starts when Redis is only not up yet, logging why', async () => {
    await boot(`redis://127.0.0.1:${await freePort()}`);
    expect(logger.lines.some((line) => /^warn Redis is unavailable at start-up \(.*ECONNREFUSED/.test(line))).toBe(true);
  });

  it('logs the real reason at run time when the password changes under a running app', async () => {
    const admin = redis.client({ password: 's3cret' });
    const started = await boot(url(':s3cret@'));
    // Deciding on Redis: a first round trip that a loaded machine made late is refused by the 'closed' policy.
    await waitFor('a request admitted on Redis', async () => (await request(started.getHttpServer()).get('/ping')).status === 200);
    await admin.config('SET', 'requirepass', 'rotated');
    try {
      await admin.call('CLIENT', 'KILL', 'TYPE', 'normal', 'SKIPME', 'yes');
      await waitFor('a failed decision logged with the reason', async () => {
        await request(started.getHttpServer()).get('/ping');
        return logger.lines.some((line) => /^error .*WRONGPASS/.test(line));
      });
      expect(logger.lines.filter((l) => l.startsWith('error')).join('\n')).not.toMatch(/Connection is closed\.?($|;|\))/m);
    } finally {
      await admin.config('SET', 'requirepass', 's3cret');
    }
  });
});
