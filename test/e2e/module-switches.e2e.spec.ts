import { Injectable } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { RateLimitConfigError, RateLimitModule, type RateLimitModuleOptions, type RateLimitOptionsFactory } from '../../lib/index.js';

/** Compiles a module around the given import; resolves with what compiling threw (undefined when it did not). */
async function startupError(imported: ReturnType<typeof RateLimitModule.forRootAsync>): Promise<unknown> {
  try {
    const moduleRef = await Test.createTestingModule({ imports: [imported] }).compile();
    await moduleRef.close();
    return undefined;
  } catch (error) {
    return error;
  }
}

@Injectable()
class SwitchingOptionsFactory implements RateLimitOptionsFactory {
  createRateLimitOptions(): RateLimitModuleOptions {
    return { globalInterceptor: true } as RateLimitModuleOptions;
  }
}

describe('module switches returned by the options factory of forRootAsync', () => {
  it.each([
    ['globalGuard', true],
    ['isGlobal', false],
    ['globalInterceptor', true],
  ])('refuses %s: %j in what useFactory returns, saying it goes beside useFactory', async (field, value) => {
    const error = await startupError(RateLimitModule.forRootAsync({ useFactory: () => ({ store: 'memory', [field]: value }) as RateLimitModuleOptions }));
    expect(error).toBeInstanceOf(RateLimitConfigError);
    expect(error).toMatchObject({ field, value });
    expect((error as Error).message).toBe(
      `Invalid rate limit option "${field}": ${String(value)} (expected no value in the options useFactory (or createRateLimitOptions) returns: "${field}" is an option of forRootAsync itself, beside useFactory: RateLimitModule.forRootAsync({ imports, inject, useFactory, ${field}: ${String(value)} }))`,
    );
  });

  it('refuses a switch returned by createRateLimitOptions of a useClass factory, naming it', async () => {
    const error = await startupError(RateLimitModule.forRootAsync({ useClass: SwitchingOptionsFactory }));
    expect(error).toMatchObject({ name: 'RateLimitConfigError', field: 'globalInterceptor', value: true });
    expect((error as Error).message).toContain('forRootAsync({ imports, inject, useFactory, globalInterceptor: true })');
  });

  it('accepts the same switch beside useFactory', async () => {
    expect(await startupError(RateLimitModule.forRootAsync({ useFactory: () => ({ store: 'memory' }), globalGuard: true }))).toBeUndefined();
  });
});
