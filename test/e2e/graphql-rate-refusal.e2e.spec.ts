import { ApolloDriver, type ApolloDriverConfig } from '@nestjs/apollo';
import { GraphQLModule, Query, Resolver } from '@nestjs/graphql';
import type { RateLimitErrorDetail } from '../../lib/index.js';
import { RateLimit } from '../../lib/index.js';
import { STORES, useGuardApps, useRedisServer, type GuardApp } from './fixtures/guard-app.js';

/**
 * The refusal of a rate rule on a GraphQL resolver (README, "The 429": the 429 in the error's `extensions`, Apollo
 * answering HTTP 200, and the headers on the HTTP response), on a resolver whose class also has a concurrency
 * rule: a query its rate rule refuses holds no slot. Apollo on Express only, as in graphql.e2e.spec.ts.
 */
@Resolver()
@RateLimit({ name: 'exports', algorithm: 'concurrency', limit: 1, leaseMs: '1m', key: 'header:x-user', shared: true })
class SearchResolver {
  /** Two a minute per user, refilled one every 30 s. */
  @Query(() => String)
  @RateLimit({ name: 'search', algorithm: 'token-bucket', limit: 2, window: '1m', key: 'header:x-user' })
  search(): string {
    return 'found';
  }

  /** Only the concurrency rule: admitted only when its one slot is free. */
  @Query(() => String)
  quick(): string {
    return 'quick';
  }
}

const message = (_context: unknown, detail: RateLimitErrorDetail) => `${detail.rule}: ${detail.used} of ${detail.limit}, retry in ${detail.retryAfterMs} ms`;

const CONTEXTS = [
  ['the default GraphQL context ({ req })', undefined],
  ['a context of { req, res }', ({ req, res }: { req: unknown; res: unknown }) => ({ req, res })],
] as const;

const redis = useRedisServer();

describe.each(CONTEXTS)('a rate rule refusing a GraphQL query (Apollo on Express) with %s', (_label, context) => {
  describe.each(STORES)('on the %s store', (store) => {
    const start = useGuardApps('express', store, redis);
    const startSearch = () =>
      start(
        { globalGuard: true, errorMessage: message },
        {
          imports: [GraphQLModule.forRoot<ApolloDriverConfig>({ driver: ApolloDriver, autoSchemaFile: true, ...(context ? { context } : {}) })],
          providers: [SearchResolver],
        },
      );
    const gql = ({ http }: GuardApp, query: string, user = 'u1') =>
      http().post('/graphql').set('X-User', user).set('Content-Type', 'application/json').send({ query }).then((res) => res);

    it('refuses the query past the rate limit with an error whose extensions carry the 429 body: the message and retryAfter in seconds', async () => {
      const app = await startSearch();
      expect((await gql(app, '{ search }')).body).toEqual({ data: { search: 'found' } });
      expect((await gql(app, '{ search }')).body).toEqual({ data: { search: 'found' } });
      const refused = await gql(app, '{ search }');
      // @nestjs/apollo answers 200 whenever the body has `data`, so the 429 travels in the error.
      expect(refused.status).toBe(200);
      expect(refused.body.data).toBeNull();
      expect(refused.body.errors).toHaveLength(1);
      expect(refused.body.errors[0]).toMatchObject({
        message: 'search: 2 of 2, retry in 30000 ms',
        path: ['search'],
        extensions: { status: 429, originalError: { statusCode: 429, message: 'search: 2 of 2, retry in 30000 ms', retryAfter: 30 } },
      });
    });

    it('sets Retry-After and the refusing rule\'s headers on the HTTP response of the refused query', async () => {
      const app = await startSearch();
      await gql(app, '{ search }');
      await gql(app, '{ search }');
      const refused = await gql(app, '{ search }');
      expect(refused.headers['retry-after']).toBe('30');
      expect(refused.headers['ratelimit']).toContain('"search";r=0;t=60');
      expect(refused.headers['ratelimit-policy']).toContain('"search";q=2;w=60');
    });

    it('takes no concurrency slot for a query its rate rule refused', async () => {
      const app = await startSearch();
      await gql(app, '{ search }');
      await gql(app, '{ search }');
      expect((await gql(app, '{ search }')).body.errors[0].extensions.status).toBe(429);
      // One slot: a lease the refused query kept would refuse this one.
      expect((await gql(app, '{ quick }')).body).toEqual({ data: { quick: 'quick' } });
    });

    it('admits the query again once retryAfter has passed, and not a millisecond before', async () => {
      const app = await startSearch();
      await gql(app, '{ search }');
      await gql(app, '{ search }');
      expect((await gql(app, '{ search }')).body.errors[0].extensions.originalError.retryAfter).toBe(30);
      app.clock.advance(30_000 - 1);
      expect((await gql(app, '{ search }')).body.errors[0].extensions.originalError).toMatchObject({ statusCode: 429, retryAfter: 1 });
      app.clock.advance(1);
      expect((await gql(app, '{ search }')).body).toEqual({ data: { search: 'found' } });
    });
  });
});
