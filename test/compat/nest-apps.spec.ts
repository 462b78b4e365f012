import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { startRedis, uniquePrefix, type TestRedis } from '../support/redis-server.js';
import { runJest, serve, settle, tsc, valueOf, type JestRun, type Outcome, type ServedResponse } from './consumer-tools.js';
import { HANG_GUARD_MS, prepareSandbox } from './sandbox.js';

/**
 * The packed package in the two kinds of app users have, each built, tested and served the way its project does
 * it, deciding in a real Redis:
 * - the Nest 11 starter (nestjs/typescript-starter at v11, CommonJS): its tsconfig (module nodenext) with
 *   TypeScript 5.7, its jest config (ts-jest, CommonJS) for the unit and e2e tests, `node dist/main`; with ioredis 5;
 * - a Nest 12 app written as ES modules: tsc, jest with --experimental-vm-modules and ts-jest useESM,
 *   `node dist/main.js`; with ioredis 6.
 */

const NEST11 = {
  '@nestjs/common': 'nest11-common',
  '@nestjs/core': 'nest11-core',
  '@nestjs/platform-express': 'nest11-platform-express',
  '@nestjs/testing': 'nest11-testing',
  // The starter's ts-jest, compiling with the starter's TypeScript (5.7, linked below).
  'ts-jest': 'ts-jest',
  ioredis: 'ioredis5',
};

let redis: TestRedis;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(() => redis?.stop());

/** The app's environment: the Redis to decide in, and a key prefix per phase so that phases do not share budgets. */
const appEnv = () => ({ REDIS_URL: redis.url, RATE_LIMIT_PREFIX: uniquePrefix('compat') });

describe('Nest 11 starter: CommonJS, TypeScript 5.7, jest with ts-jest, ioredis 5', () => {
  let dir: string;
  let build: Outcome<unknown>;

  beforeAll(async () => {
    dir = prepareSandbox('nest11-starter', { fixture: 'nest11-starter', packages: NEST11, links: { typescript: 'typescript57' } });
    build = await settle(tsc(dir, 'typescript57', 'tsconfig.build.json'));
  }, HANG_GUARD_MS);

  it('type-checks and builds with its tsconfig (module nodenext) and TypeScript 5.7 (no TS1479)', () => {
    valueOf(build);
    expect(existsSync(join(dir, 'dist', 'main.js'))).toBe(true);
  });

  it('passes its unit tests under its jest config, on the CommonJS build, with RateLimitService injected', async () => {
    const run: JestRun = await runJest(dir, [], { env: appEnv() });
    expect(run.numFailedTests).toBe(0);
    expect(run.passed).toEqual([
      'AppController root should return "Hello World!"',
      'AppController root peeks at the default rule through the injected RateLimitService',
      'AppController root loads the CommonJS build of the package',
    ]);
  }, HANG_GUARD_MS);

  it('passes its e2e tests (jest-e2e.json), refusing the third request of a minute from Redis', async () => {
    const run = await runJest(dir, ['--config', './test/jest-e2e.json'], { env: appEnv() });
    expect(run.numFailedTests).toBe(0);
    expect(run.passed).toEqual(['AppController (e2e) / (GET)', 'AppController (e2e) answers the third request of a minute with 429 and the draft headers']);
  }, HANG_GUARD_MS);

  it('serves from node dist/main: 200, 200 then 429', async () => {
    valueOf(build);
    const responses: ServedResponse[] = await serve(dir, 'dist/main', ['/limited', '/limited', '/limited'], appEnv());
    expect(responses.map((r) => r.status)).toEqual([200, 200, 429]);
    expect(responses[2]).toMatchObject({ policy: '"default";q=2;w=60', body: { statusCode: 429, message: 'Too Many Requests' } });
  }, HANG_GUARD_MS);
});

describe('Nest 12 app: ES modules, tsc, jest in ESM mode, ioredis 6', () => {
  let dir: string;
  let build: Outcome<unknown>;

  beforeAll(async () => {
    dir = prepareSandbox('nest12-esm-app', { fixture: 'nest12-esm-app' });
    build = await settle(tsc(dir, 'typescript', 'tsconfig.build.json'));
  }, HANG_GUARD_MS);

  it('type-checks and builds with tsc (module nodenext, strict)', () => {
    valueOf(build);
    expect(existsSync(join(dir, 'dist', 'main.js'))).toBe(true);
  });

  it('passes its tests under jest with --experimental-vm-modules and ts-jest useESM', async () => {
    const run = await runJest(dir, [], { env: appEnv(), nodeOptions: '--experimental-vm-modules' });
    expect(run.numFailedTests).toBe(0);
    expect(run.numPassedTests).toBe(3);
  }, HANG_GUARD_MS);

  it('serves from node dist/main.js: 200, 200 then 429', async () => {
    valueOf(build);
    const responses = await serve(dir, 'dist/main.js', ['/limited', '/limited', '/limited'], appEnv());
    expect(responses.map((r) => r.status)).toEqual([200, 200, 429]);
    expect(responses[2]).toMatchObject({ policy: '"default";q=2;w=60', body: { statusCode: 429, message: 'Too Many Requests' } });
  }, HANG_GUARD_MS);
});
