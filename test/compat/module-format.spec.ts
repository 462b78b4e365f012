import { readFileSync } from 'node:fs';
import { join, sep } from 'node:path';
import { assertBuilt, PACKAGE_NAME, prepareSandbox, ROOT_NODE_MODULES, runFixture, type FixtureRun } from './sandbox.js';

/** The exact dependency versions a package under the root node_modules pins. */
function dependenciesOf(name: string): Record<string, string> {
  const manifest = readFileSync(join(ROOT_NODE_MODULES, name, 'package.json'), 'utf8');
  return (JSON.parse(manifest) as { dependencies: Record<string, string> }).dependencies;
}

/**
 * The PACKED package loaded the way users load it in plain Node: with require() from a CommonJS Nest 11 app and
 * with import from an ES-module Nest 12 app. Node >= 20.19 matches the "module-sync" export condition for both, so
 * both get the ES-module build, and an app that does both gets one copy of every class (Nest's DI compares
 * classes). Test runners and TypeScript, which do not know that condition, take "require" (dist/cjs) or "import":
 * see nest-apps.spec.ts. Each app runs in its own node process from a sandbox under test/compat/.tmp (see
 * sandbox.ts) and prints one JSON report.
 */

interface AppReport {
  format: 'cjs' | 'esm';
  nestVersion: string;
  nestCorePath: string;
  nestCommonPath: string;
  platformPath: string;
  /** Version of the express that @nestjs/platform-express itself resolves. */
  expressVersion: string;
  libraryPath: string;
  /** `Object.prototype.toString` of what require()/import returned for the package: `[object Module]`. */
  libraryTag: string;
  memoryStoreType: string;
  statuses: number[];
  /** `RateLimit-Policy` of the first response. */
  policyHeader: string | null;
  /** Body of the 429. */
  rejectedBody: unknown;
  /** `true`, or the error a RedisStore construction threw (its Lua files not found, ...). */
  redisStoreLoaded: true | string;
  /** Whether the other way of loading the package in the same app (import() or require()) gave the same RateLimitService. */
  sameClassesInOtherFormat: boolean;
}

/** One app: where its Nest must resolve from, and which platform-express (root folder name) pins its express. */
interface AppCase {
  app: string;
  fixture: string;
  entry: string;
  nest: number;
  packages: Record<string, string>;
  /** The other way of loading the package, which must give the same classes. */
  other: string;
  nestModules: (dir: string) => string;
  platform: string;
}

describe.each<AppCase>([
  {
    app: 'CommonJS app on Nest 11 (require)',
    fixture: 'nest11-cjs',
    entry: 'app.cjs',
    nest: 11,
    packages: { '@nestjs/common': 'nest11-common', '@nestjs/core': 'nest11-core', '@nestjs/platform-express': 'nest11-platform-express' },
    other: 'an import()',
    // Nest 11 from the sandbox's copies, not the repository's Nest 12, with the express its adapter pins (nested
    // dependencies are copied along).
    nestModules: (dir: string) => join(dir, 'node_modules'),
    platform: 'nest11-platform-express',
  },
  {
    app: 'ES-module app on Nest 12 (import)',
    fixture: 'nest12-esm',
    entry: 'app.mjs',
    nest: 12,
    packages: {},
    other: 'a require()',
    nestModules: () => ROOT_NODE_MODULES,
    platform: '@nestjs/platform-express',
  },
])('module formats of the built package: $app', ({ fixture, entry, nest, packages, other, nestModules, platform }) => {
  let dir: string;
  let run: FixtureRun<AppReport>;

  beforeAll(async () => {
    assertBuilt();
    dir = prepareSandbox(fixture, { fixture, packages });
    run = await runFixture<AppReport>(dir, entry);
  });

  it(`runs on Nest ${nest}, resolved where the app's node_modules put it`, () => {
    const modules = nestModules(dir) + sep;
    expect(run.report.nestVersion.split('.')[0]).toBe(String(nest));
    expect([run.report.nestCorePath, run.report.nestCommonPath, run.report.platformPath].filter((path) => !path.startsWith(modules))).toEqual([]);
  });

  it('serves through its express adapter with the express that adapter pins', () => {
    expect(run.report.expressVersion).toBe(dependenciesOf(platform).express);
  });

  it('loads the package copy\'s ES-module build (the "module-sync" condition)', () => {
    expect(run.report.libraryPath).toBe(join(dir, 'node_modules', PACKAGE_NAME, 'dist', 'index.js'));
    expect(run.report.libraryTag).toBe('[object Module]');
    expect(run.report.memoryStoreType).toBe('function');
  });

  it(`gives ${other} in the same app the very classes it loaded first (one RateLimitService per app)`, () => {
    expect(run.report.sameClassesInOtherFormat).toBe(true);
  });

  it('answers 200, 200 then 429 with the 429 body and headers of RateLimitModule.forRoot and its global guard', () => {
    expect(run.report.statuses).toEqual([200, 200, 429]);
    expect(run.report.policyHeader).toBe('"default";q=2;w=60');
    expect(run.report.rejectedBody).toMatchObject({ statusCode: 429, message: 'Too Many Requests' });
  });

  it('constructs a RedisStore, whose Lua files load from the package copy', () => {
    expect(run.report.redisStoreLoaded).toBe(true);
  });
});
