import type { DynamicModule, INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import type { AbstractHttpAdapter } from '@nestjs/core';
import { ExpressAdapter } from '@nestjs/platform-express';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import type { RateLimitModuleOptions } from '../../../../lib/index.js';
import { useStoreOptions, type StoreKind } from '../../../e2e/support/e2e-stores.js';
import { ManualClock } from '../../../support/manual.clock.js';
import { uniquePrefix } from '../../../support/redis-server.js';

/**
 * What every ported fixture module spreads into `RateLimitModule.forRoot`: the store, a key prefix of the app's own
 * and a clock the test moves. Throttler's suite sleeps through its windows and blocks (up to 20 s at a time); the
 * port advances the clock by the same amounts instead, so it asserts the same behaviour at once and deterministically.
 */
export type CompatSetup = Pick<RateLimitModuleOptions, 'store' | 'timeoutMs' | 'keyPrefix' | 'clock'>;

/** Throttler's `describe.each` table: the two HTTP adapters, each app on `listen(0)`. */
export const ADAPTERS: { adapterName: string; adapter: () => AbstractHttpAdapter }[] = [
  { adapterName: 'Express', adapter: () => new ExpressAdapter() },
  { adapterName: 'Fastify', adapter: () => new FastifyAdapter() },
];

/** Throttler runs on its memory storage; the port runs on both of ours. */
export const STORES: StoreKind[] = ['memory', 'redis'];

/** One redis-server for the test file; per app, a fresh clock and key prefix (see CompatSetup). */
export function useCompatSetup(): (kind: StoreKind) => { setup: CompatSetup; clock: ManualClock } {
  const storeOptions = useStoreOptions();
  return (kind) => {
    const clock = new ManualClock();
    return { clock, setup: { ...storeOptions(kind), keyPrefix: uniquePrefix('throttler'), clock: clock.now } };
  };
}

/** Serves an app as throttler's suite does: `listen(0)` on every interface, reached through `app.getUrl()`. */
export async function listen(app: INestApplication): Promise<string> {
  await app.listen(0);
  return app.getUrl();
}

/** A served fixture: its URL and its clock, read once the suite's beforeAll has run. */
export interface CompatApp {
  baseUrl(): string;
  /** throttler's `await setTimeout(ms)`, as a move of the app's clock. */
  setTimeout(ms: number): Promise<void>;
}

/**
 * Throttler's per-adapter beforeAll / afterAll: compiles the fixture module, serves it on `listen(0)` with the
 * adapter, and closes it after the suite.
 */
export function useCompatApp(compat: ReturnType<typeof useCompatSetup>, kind: StoreKind, adapter: () => AbstractHttpAdapter, register: (setup: CompatSetup) => DynamicModule): CompatApp {
  let app: INestApplication | undefined;
  let clock: ManualClock;
  let url: string;
  beforeAll(async () => {
    const { setup, clock: appClock } = compat(kind);
    clock = appClock;
    const modRef = await Test.createTestingModule({ imports: [register(setup)] }).compile();
    app = modRef.createNestApplication(adapter(), { logger: false });
    url = await listen(app);
  });
  afterAll(async () => {
    await app?.close();
  });
  return {
    baseUrl: () => url,
    setTimeout: async (ms) => clock.advance(ms),
  };
}
