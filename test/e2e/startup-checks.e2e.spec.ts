import { jest } from '@jest/globals';
import { Controller, Get, Logger } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { RateLimit, RateLimitConfigError, RateLimitConfigWatcher, RateLimitModule, RateLimitPolicies } from '../../lib/index.js';

@Controller()
class SignupController {
  @Get('signup')
  @RateLimit('signup')
  signup() {
    return { ok: true };
  }
}

/** A ConfigService stand-in holding one mutable namespace (what `registerAs` gives the real one). */
function configWith(namespace: Record<string, unknown>) {
  return { get: (path: string) => (path === 'rateLimit' ? namespace : undefined) };
}

async function boot(options: Parameters<typeof RateLimitModule.forRoot>[0]) {
  const moduleRef = await Test.createTestingModule({ imports: [RateLimitModule.forRoot(options)], controllers: [SignupController] }).compile();
  const app = moduleRef.createNestApplication({ logger: false });
  await app.init();
  return app;
}

describe('start-up checks of decorated routes', () => {
  it('stops the app when a handler refers to a rule nobody configured, naming the handler and the rule', async () => {
    const failure = boot({ rules: { login: { limit: 5, window: '1m' } } });
    await expect(failure).rejects.toThrow(RateLimitConfigError);
    await expect(boot({ rules: {} })).rejects.toThrow(/@RateLimit on SignupController\.signup.*"signup"/);
  });

  it('starts when the referenced rule exists', async () => {
    const app = await boot({ rules: { signup: { limit: 5, window: '1m' } } });
    await app.close();
  });

  it('refuses a config reload that drops a rule a handler refers to, and keeps the rule in force', async () => {
    const namespace: Record<string, unknown> = { rules: { signup: { limit: 5, window: '1m' } } };
    const app = await boot({ config: configWith(namespace) });
    const errors = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    try {
      namespace.rules = { login: { limit: 5, window: '1m' } };
      // The drop is refused on its own; the new rule beside it goes into force.
      expect(app.get(RateLimitConfigWatcher).refresh()).toBe(true);
      expect(errors).toHaveBeenCalledWith(expect.stringContaining('"rateLimit.rules.signup"'));
      expect(app.get(RateLimitPolicies).get('signup')?.rule.limit).toBe(5);
    } finally {
      errors.mockRestore();
      await app.close();
    }
  });

  it('refuses a shared rule without a name where it is written', () => {
    expect(() => {
      class Anonymous {
        @RateLimit({ limit: 1, window: '1m', shared: true })
        handler() {}
      }
      return Anonymous;
    }).toThrow(/Anonymous\.handler: a shared rule needs a "name"/);
  });

  it('stops the app when two routes define one shared rule differently', async () => {
    @Controller('a')
    class AController {
      @Get()
      @RateLimit({ name: 'search', limit: 100, window: '1m', shared: true })
      a() {}
    }
    @Controller('b')
    class BController {
      @Get()
      @RateLimit({ name: 'search', limit: 1, window: '1h', shared: true })
      b() {}
    }
    const moduleRef = await Test.createTestingModule({ imports: [RateLimitModule.forRoot({})], controllers: [AController, BController] }).compile();
    const app = moduleRef.createNestApplication({ logger: false });
    await expect(app.init()).rejects.toThrow(/"search".*defines "search" differently/);
  });
});
