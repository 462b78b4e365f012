import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { NestFactory } from '@nestjs/core';
import { AppModule } from './app.module.js';
import { APP_CONFIG, type AppConfig } from './config/app.config.js';

async function bootstrap(): Promise<void> {
  const app = await NestFactory.create(AppModule.register());
  // On Ctrl-C the rate-limit module closes the Redis client it created.
  app.enableShutdownHooks();
  const { host, port, redisUrl, adminToken, adminTokenGenerated } = app.get(ConfigService).getOrThrow<AppConfig>(APP_CONFIG);
  await app.listen(port, host);

  const logger = new Logger('SampleApp');
  logger.log(redisUrl ? `Rate limits are kept in Redis at ${redact(redisUrl)}` : 'Rate limits are kept in memory (set REDIS_URL to keep them in Redis)');
  if (adminTokenGenerated) logger.warn(`ADMIN_TOKEN is not set: PATCH /admin/rate-limits/:rule takes this run's token, ${adminToken}`);
  logger.log(`Listening on ${await app.getUrl()}`);
}

/** A Redis URL may carry a password; the log must not. */
function redact(url: string): string {
  return url.replace(/\/\/[^@/]*@/, '//***@');
}

await bootstrap();
