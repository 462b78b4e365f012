import { Controller, Get, type DynamicModule } from '@nestjs/common';
import { ConfigModule, ConfigService } from '@nestjs/config';
import { RateLimit, RateLimitConfigError, RateLimitModule, type RateLimitModuleOptions } from '../../lib/index.js';
import { PLATFORMS, startApp } from './support/http-app.js';
import { ENV_ALGORITHM, ENV_LIMIT, ENV_WINDOW, rateLimitConfig, withEnv } from './support/rate-limit-config.js';

@Controller('auth')
class LoginController {
  @Get('login')
  @RateLimit('login')
  login() {
    return { ok: true };
  }
}

/** The rules come from ConfigService, as in production. */
const fromConfig = (): (DynamicModule | Promise<DynamicModule>)[] => [
  rateLimitConfig(),
  RateLimitModule.forRootAsync({ imports: [ConfigModule], inject: [ConfigService], useFactory: (config: ConfigService) => ({ config }), globalGuard: true }),
];

/** The options are written in code. */
const fromCode = (options: Record<string, unknown>) => [
  RateLimitModule.forRoot({ rules: { login: { limit: 3, window: '1m' } }, ...options } as RateLimitModuleOptions),
];

async function startUpError(start: Promise<unknown>): Promise<RateLimitConfigError> {
  const error = await start.then(
    () => {
      throw new Error('the application started');
    },
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(RateLimitConfigError);
  return error as RateLimitConfigError;
}

describe.each(PLATFORMS)('invalid configuration at start-up on %s', (platform) => {
  let env: { restore(): void } | undefined;
  afterEach(() => {
    env?.restore();
    env = undefined;
  });

  it.each([
    [ENV_LIMIT, 'abc', 'rateLimit.rules.login.limit', '"rateLimit.rules.login.limit": "abc" (expected an integer of 1 or more)'],
    [ENV_LIMIT, '-5', 'rateLimit.rules.login.limit', '"rateLimit.rules.login.limit": "-5"'],
    [ENV_LIMIT, '', 'rateLimit.rules.login.limit', '"rateLimit.rules.login.limit": ""'],
    [ENV_WINDOW, 'soon', 'rateLimit.rules.login.window', '"rateLimit.rules.login.window": "soon"'],
    [ENV_ALGORITHM, 'leaky-bucket', 'rateLimit.rules.login.algorithm', '"rateLimit.rules.login.algorithm": "leaky-bucket" (expected one of sliding-log'],
  ])('stops when %s is %j, naming %s and the value', async (name, value, field, message) => {
    env = withEnv({ [name]: value });
    const error = await startUpError(startApp(platform, { imports: fromConfig(), controllers: [LoginController] }));
    expect(error.field).toBe(field);
    expect(error.value).toBe(value);
    expect(error.message).toContain(message);
  });

  it.each([
    [{ stor: 'memory' }, 'stor', 'memory', '"stor": "memory" (expected one of the options store, keyPrefix'],
    [{ rules: { login: { limit: 3, window: '1m', limt: 5 } } }, 'rules.login.limt', 5, '"rules.login.limt": 5 (expected one of the fields'],
    [{ headers: 'draft-8' }, 'headers', 'draft-8', '"headers": "draft-8" (expected "draft", "legacy", "both", "per-rule" or false)'],
    [{ headers: true }, 'headers', true, '"headers": true'],
    [{ trustProxy: '10.0.0.0/33' }, 'trustProxy', '10.0.0.0/33', '"trustProxy": "10.0.0.0/33"'],
    [{ trustProxy: -1 }, 'trustProxy', -1, '"trustProxy": -1'],
    [{ trustProxy: { proxy: true } }, 'trustProxy', { proxy: true }, '"trustProxy": {"proxy":true}'],
    [{ refreshIntervalMs: 1000 }, 'refreshIntervalMs', 1000, '"refreshIntervalMs": 1000 (expected 0 unless "config" is set)'],
    [{ defaultRule: { limit: 5 } }, 'defaultRule.window', undefined, '"defaultRule.window": undefined'],
  ])('stops on the module options %j, naming %s and the value', async (options, field, value, message) => {
    const error = await startUpError(startApp(platform, { imports: fromCode(options), controllers: [LoginController] }));
    expect(error.field).toBe(field);
    expect(error.value).toEqual(value);
    expect(error.message).toContain(message);
  });

  it('stops when useFactory returns invalid options, naming the field', async () => {
    const error = await startUpError(
      startApp(platform, {
        imports: [RateLimitModule.forRootAsync({ useFactory: async () => ({ rules: { login: { limit: '3', window: '1m', algorithm: 'leaky' as never } } }) })],
        controllers: [LoginController],
      }),
    );
    expect(error.field).toBe('rules.login.algorithm');
  });
});
