import type { INestApplication, ModuleMetadata } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { ExpressAdapter } from '@nestjs/platform-express';
import { FastifyAdapter } from '@nestjs/platform-fastify';

export type Platform = 'express' | 'fastify';
export const PLATFORMS: Platform[] = ['express', 'fastify'];

export interface AppOptions {
  /** Express `trust proxy` / Fastify `trustProxy`. */
  platformTrustProxy?: boolean;
}

/** Compiles a module and serves it over real HTTP on a free port, on the chosen platform. */
export async function startApp(platform: Platform, metadata: ModuleMetadata, options: AppOptions = {}): Promise<INestApplication> {
  const moduleRef = await Test.createTestingModule(metadata).compile();
  const app =
    platform === 'express'
      ? moduleRef.createNestApplication(new ExpressAdapter(), { logger: false })
      : moduleRef.createNestApplication(new FastifyAdapter({ trustProxy: options.platformTrustProxy ?? false }), { logger: false });
  if (platform === 'express' && options.platformTrustProxy) app.getHttpAdapter().getInstance().set('trust proxy', true);
  await app.init();
  if (platform === 'fastify') await app.getHttpAdapter().getInstance().ready();
  await app.listen(0, '127.0.0.1');
  return app;
}
