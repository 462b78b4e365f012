import { APP_GUARD } from '@nestjs/core';
import { PLATFORMS } from './support/http-app.js';
import { STORES, useGuardApps, useRedisServer } from './fixtures/guard-app.js';
import {
  AuthStubGuard,
  GuardedProfileController,
  GuardedSubProfileController,
  LateAuthProfileController,
  MiddlewareAuthModule,
  ProfileController,
} from './fixtures/keys/user.fixtures.js';

const redis = useRedisServer();

describe.each(PLATFORMS)('key "user" on %s', (platform) => {
  describe.each(STORES)('with the %s store', (store) => {
    const start = useGuardApps(platform, store, redis);

    describe('behind @UseGuards(AuthGuard, RateLimitGuard)', () => {
      it('counts each request.user.id on a budget of its own', async () => {
        const { http } = await start({}, { controllers: [GuardedProfileController] });
        await http().get('/guarded').set('x-user', 'alice').expect(200);
        await http().get('/guarded').set('x-user', 'alice').expect(429);
        await http().get('/guarded').set('x-user', 'bob').expect(200);
      });

      it('counts per request.user.sub when the user has no id', async () => {
        const { http } = await start({}, { controllers: [GuardedSubProfileController] });
        await http().get('/guarded-sub').set('x-user', 'alice').expect(200);
        await http().get('/guarded-sub').set('x-user', 'alice').expect(429);
        await http().get('/guarded-sub').set('x-user', 'bob').expect(200);
      });

      it('counts anonymous requests per client IP, apart from the users', async () => {
        const { http } = await start({}, { controllers: [GuardedProfileController] });
        await http().get('/guarded').expect(200);
        await http().get('/guarded').expect(429);
        await http().get('/guarded').set('x-user', 'alice').expect(200);
      });
    });

    describe('with the global rate-limit guard', () => {
      it('sees the user set by an auth APP_GUARD the application registers before it', async () => {
        const { http } = await start(
          { globalGuard: true },
          { controllers: [ProfileController], providers: [{ provide: APP_GUARD, useClass: AuthStubGuard }] },
        );
        await http().get('/profile').set('x-user', 'alice').expect(200);
        await http().get('/profile').set('x-user', 'alice').expect(429);
        await http().get('/profile').set('x-user', 'bob').expect(200);
      });

      it('sees the user set by an authentication middleware', async () => {
        const { http } = await start({ globalGuard: true }, { imports: [MiddlewareAuthModule] });
        await http().get('/profile').set('x-user', 'alice').expect(200);
        await http().get('/profile').set('x-user', 'alice').expect(429);
        await http().get('/profile').set('x-user', 'bob').expect(200);
      });

      it('runs before a controller-level auth guard, so it counts those users per IP', async () => {
        const { http } = await start({ globalGuard: true }, { controllers: [LateAuthProfileController] });
        await http().get('/late-auth').set('x-user', 'alice').expect(200);
        await http().get('/late-auth').set('x-user', 'bob').expect(429);
      });
    });
  });
});
