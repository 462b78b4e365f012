import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { NestFactory } from '@nestjs/core';
import { Transport, type MicroserviceOptions } from '@nestjs/microservices';
import { AppModule } from './app.module.js';
import { APP_CONFIG, type AppConfig } from './config/app.config.js';

async function bootstrap(): Promise<void> {
  const app = await NestFactory.create(AppModule.register());
  // On Ctrl-C the rate-limit module closes the Redis client it created.
  app.enableShutdownHooks();
  const { host, port, microservicePort, redisUrl, adminToken, adminTokenGenerated } = app.get(ConfigService).getOrThrow<AppConfig>(APP_CONFIG);
  // A hybrid app: the same module also serves messages from other services over TCP. inheritAppConfig: the global
  // rate-limit guard applies to them too (a connected microservice does not inherit the app's global guards by default).
  app.connectMicroservice<MicroserviceOptions>({ transport: Transport.TCP, options: { host, port: microservicePort } }, { inheritAppConfig: true });
  await app.startAllMicroservices();
  await app.listen(port, host);

  const logger = new Logger('SampleApp');
  // The rate-limit module logs which store it uses ("memory", or the Redis URL without its password).
  if (!redisUrl) logger.log('Set REDIS_URL to keep rate limits in Redis, shared by every instance');
  if (adminTokenGenerated) logger.warn(`ADMIN_TOKEN is not set: PATCH /admin/rate-limits/:rule takes this run's token, ${adminToken}`);
  logger.log(`Listening on ${await app.getUrl()}, and for microservice messages on tcp://${host}:${microservicePort}`);
}

await bootstrap();
