/**
 * Fastify's inject() answers through light-my-request, whose cookie dependency is an ES module that jest's
 * CommonJS require() cannot load on Node 20: so this check runs in plain Node, on the built package, loaded by its
 * name (the package's own exports, `nestjs-redis-rate-limit/testing` included). Prints one JSON report.
 */
import 'reflect-metadata';
import { Controller, Get, Module } from '@nestjs/common';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { Test } from '@nestjs/testing';
import { RateLimitModule } from 'nestjs-redis-rate-limit';
import { expectRateLimited, RateLimitTesting } from 'nestjs-redis-rate-limit/testing';

class ItemsController {
  items() {
    return ['a', 'b'];
  }
}
Controller()(ItemsController);
Get('items')(ItemsController.prototype, 'items', Object.getOwnPropertyDescriptor(ItemsController.prototype, 'items'));
class AppModule {}
Module({ imports: [RateLimitModule.forRoot({ defaultRule: { limit: 1, window: '1m' }, globalGuard: true })], controllers: [ItemsController] })(AppModule);

const moduleRef = await RateLimitTesting.install(Test.createTestingModule({ imports: [AppModule] })).compile();
const app = moduleRef.createNestApplication(new FastifyAdapter(), { logger: false });
await app.init();
await app.getHttpAdapter().getInstance().ready();
const report = {};
try {
  const admitted = await app.inject({ method: 'GET', url: '/items' });
  report.admitted = attempt(() => expectRateLimited(admitted));
  const refused = await app.inject({ method: 'GET', url: '/items' });
  report.bodyType = typeof refused.body;
  report.refused = attempt(() => expectRateLimited(refused, { rule: 'default', retryAfter: 60 }));
  const limits = RateLimitTesting.from(app);
  limits.advance('1m');
  report.afterAdvance = (await app.inject({ method: 'GET', url: '/items' })).statusCode;
} finally {
  await app.close();
}
process.stdout.write(JSON.stringify(report));

function attempt(check) {
  try {
    return { passed: check() };
  } catch (error) {
    return { failed: `${error.name}: ${error.message}` };
  }
}
