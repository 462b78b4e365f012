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
  /** CommonJS app: whether `import()` of the package gave the RateLimitService require() gave. */
  sameClassesForImport?: boolean;
  /** ES-module app: whether `require()` of the package gave the RateLimitService import gave. */
  sameClassesForRequire?: boolean;
}

describe('module formats of the built package', () => {
  beforeAll(() => assertBuilt());

  describe('CommonJS app on Nest 11 (require)', () => {
    let dir: string;
    let run: FixtureRun<AppReport>;

    beforeAll(async () => {
      dir = prepareSandbox('nest11-cjs', {
        fixture: 'nest11-cjs',
        packages: {
          '@nestjs/common': 'nest11-common',
          '@nestjs/core': 'nest11-core',
          '@nestjs/platform-express': 'nest11-platform-express',
        },
      });
      run = await runFixture<AppReport>(dir, 'app.cjs');
    });

    it('runs on Nest 11 from the sandbox, not on the repository Nest 12', () => {
      const sandboxModules = join(dir, 'node_modules') + sep;
      expect(run.report.nestVersion).toMatch(/^11\./);
      expect(run.report.nestCorePath.startsWith(sandboxModules)).toBe(true);
      expect(run.report.nestCommonPath.startsWith(sandboxModules)).toBe(true);
      expect(run.report.platformPath.startsWith(sandboxModules)).toBe(true);
    });

    it("serves through Nest 11's express adapter with the express it pins (nested dependencies copied along)", () => {
      expect(run.report.expressVersion).toBe(dependenciesOf('nest11-platform-express').express);
    });

    it('loads the package copy through require() of its ES-module build (the "module-sync" condition)', () => {
      expect(run.report.libraryPath).toBe(join(dir, 'node_modules', PACKAGE_NAME, 'dist', 'index.js'));
      expect(run.report.libraryTag).toBe('[object Module]');
      expect(run.report.memoryStoreType).toBe('function');
    });

    it('gives an import() in the same app the very classes require() gave (one RateLimitService per app)', () => {
      expect(run.report.sameClassesForImport).toBe(true);
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

  describe('ES-module app on Nest 12 (import)', () => {
    let dir: string;
    let run: FixtureRun<AppReport>;

    beforeAll(async () => {
      dir = prepareSandbox('nest12-esm', { fixture: 'nest12-esm' });
      run = await runFixture<AppReport>(dir, 'app.mjs');
    });

    it('runs on the repository Nest 12', () => {
      expect(run.report.nestVersion).toMatch(/^12\./);
      expect(run.report.nestCorePath.startsWith(join(ROOT_NODE_MODULES, '@nestjs', 'core') + sep)).toBe(true);
      expect(run.report.expressVersion).toBe(dependenciesOf('@nestjs/platform-express').express);
    });

    it('imports the package copy', () => {
      expect(run.report.libraryPath).toBe(join(dir, 'node_modules', PACKAGE_NAME, 'dist', 'index.js'));
      expect(run.report.libraryTag).toBe('[object Module]');
      expect(run.report.memoryStoreType).toBe('function');
    });

    it('gives a require() in the same app the very classes import gave (one RateLimitService per app)', () => {
      expect(run.report.sameClassesForRequire).toBe(true);
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
});
