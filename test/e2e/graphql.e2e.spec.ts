import type { INestApplication } from '@nestjs/common';
import { ApolloDriver, type ApolloDriverConfig } from '@nestjs/apollo';
import { GraphQLModule, Query, Resolver } from '@nestjs/graphql';
import request from 'supertest';
import { RateLimit, RateLimitModule, SkipRateLimit } from '../../lib/index.js';
import { ManualClock } from '../support/manual.clock.js';
import { startApp } from './support/http-app.js';

/**
 * Apollo Server 5 through @nestjs/apollo, on Express only: Apollo on Fastify needs @as-integrations/fastify
 * (or mercurius), which the project does not install.
 */
@Resolver()
class GreetingResolver {
  @Query(() => String)
  hello(): string {
    return 'hi';
  }

  @Query(() => String)
  @RateLimit('1m', 1)
  strict(): string {
    return 'strict';
  }

  @Query(() => String)
  @SkipRateLimit()
  health(): string {
    return 'up';
  }
}

const CONTEXTS = [
  ['the default GraphQL context ({ req })', undefined],
  ['a context of { req, res }', ({ req, res }: { req: unknown; res: unknown }) => ({ req, res })],
] as const;

describe.each(CONTEXTS)('GraphQL (Apollo on Express) with %s', (_label, context) => {
  const clock = new ManualClock();
  let app: INestApplication;
  let lastIp = 0;
  /** Every test counts for its own client: the module trusts X-Forwarded-For. */
  const nextIp = () => `203.0.113.${++lastIp}`;
  const gql = (ip: string, query: string) =>
    request(app.getHttpServer()).post('/graphql').set('X-Forwarded-For', ip).set('Content-Type', 'application/json').send({ query });

  beforeAll(async () => {
    app = await startApp('express', {
      imports: [
        GraphQLModule.forRoot<ApolloDriverConfig>({ driver: ApolloDriver, autoSchemaFile: true, ...(context ? { context } : {}) }),
        RateLimitModule.forRoot({ defaultRule: { limit: 2, window: '1m' }, globalGuard: true, trustProxy: true, clock: clock.now }),
      ],
      providers: [GreetingResolver],
    });
  });
  afterAll(() => app.close());
  // Each test starts on a minute boundary, so that the sliding window's reset times are whole minutes.
  beforeEach(() => clock.set(Math.ceil((clock.ms + 1) / 60_000) * 60_000));

  it('answers queries within the limit', async () => {
    const ip = nextIp();
    for (let i = 0; i < 2; i++) {
      const res = await gql(ip, '{ hello }');
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ data: { hello: 'hi' } });
    }
  });

  it('sets the rate-limit headers on the HTTP response of an allowed query', async () => {
    const res = await gql(nextIp(), '{ hello }');
    expect(res.headers['ratelimit-policy']).toBe('"default";q=2;w=60');
    expect(res.headers['ratelimit']).toBe('"default";r=1;t=60');
    expect(res.headers['retry-after']).toBeUndefined();
  });

  it('refuses the query past the limit with an error carrying the 429 body in its extensions', async () => {
    const ip = nextIp();
    await gql(ip, '{ hello }');
    await gql(ip, '{ hello }');
    const res = await gql(ip, '{ hello }');
    // @nestjs/apollo answers 200 whenever the body has `data`, so the 429 travels in the error.
    expect(res.status).toBe(200);
    expect(res.body.data).toBeNull();
    expect(res.body.errors).toHaveLength(1);
    expect(res.body.errors[0]).toMatchObject({
      message: 'Too Many Requests',
      path: ['hello'],
      extensions: { status: 429, originalError: { statusCode: 429, message: 'Too Many Requests', retryAfter: 60 } },
    });
  });

  it('sets Retry-After and the rate-limit headers on the HTTP response of a refused query', async () => {
    const ip = nextIp();
    await gql(ip, '{ hello }');
    await gql(ip, '{ hello }');
    const res = await gql(ip, '{ hello }');
    expect(res.headers['retry-after']).toBe('60');
    expect(res.headers['ratelimit-policy']).toBe('"default";q=2;w=60');
    expect(res.headers['ratelimit']).toBe('"default";r=0;t=60');
  });

  it('counts each client IP apart', async () => {
    const first = nextIp();
    const second = nextIp();
    await gql(first, '{ hello }');
    await gql(first, '{ hello }');
    expect((await gql(first, '{ hello }')).body.errors[0].extensions.status).toBe(429);
    const other = await gql(second, '{ hello }');
    expect(other.body).toEqual({ data: { hello: 'hi' } });
    expect(other.headers['ratelimit']).toBe('"default";r=1;t=60');
  });

  it('lets the client through again once the window has passed', async () => {
    const ip = nextIp();
    await gql(ip, '{ hello }');
    await gql(ip, '{ hello }');
    expect((await gql(ip, '{ hello }')).body.errors).toHaveLength(1);
    clock.advance(120_000);
    expect((await gql(ip, '{ hello }')).body).toEqual({ data: { hello: 'hi' } });
  });

  it('applies a @RateLimit on a resolver in place of the default rule', async () => {
    const ip = nextIp();
    const ok = await gql(ip, '{ strict }');
    expect(ok.body).toEqual({ data: { strict: 'strict' } });
    expect(ok.headers['ratelimit-policy']).toBe('"default";q=1;w=60');
    expect((await gql(ip, '{ strict }')).body.errors[0].extensions.status).toBe(429);
  });

  it('leaves a @SkipRateLimit resolver unlimited', async () => {
    const ip = nextIp();
    for (let i = 0; i < 5; i++) {
      const res = await gql(ip, '{ health }');
      expect(res.body).toEqual({ data: { health: 'up' } });
      expect(res.headers['ratelimit']).toBeUndefined();
    }
  });

  it('charges every guarded root field of an operation', async () => {
    const ip = nextIp();
    expect((await gql(ip, '{ a: hello b: hello }')).body).toEqual({ data: { a: 'hi', b: 'hi' } });
    expect((await gql(ip, '{ hello }')).body.errors[0].extensions.status).toBe(429);
  });
});
