import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { HANG_GUARD_MS, npmPack, REPO_ROOT, ROOT_NODE_MODULES, TMP_DIR } from './sandbox.js';

/**
 * What `npm pack` of a fresh clone ships (what `npm publish` would upload): a copy of the repository's files as git
 * sees them (tracked, or new and not ignored), without dist/, packed with its lifecycle scripts, so the prepack
 * build has to make dist/ itself. node_modules is linked, as after `npm install`.
 */

const CLONE = join(TMP_DIR, 'clone');
const PACKED = join(TMP_DIR, 'clone-pack');
let entries: string[];
let manifest: Record<string, unknown> & { exports: Record<string, unknown> };

beforeAll(() => {
  rmSync(CLONE, { recursive: true, force: true });
  rmSync(PACKED, { recursive: true, force: true });
  mkdirSync(PACKED, { recursive: true });
  const files = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: REPO_ROOT, encoding: 'utf8' }).split('\0').filter(Boolean);
  for (const file of files) {
    if (!existsSync(join(REPO_ROOT, file))) continue; // deleted in the work tree, not yet committed
    mkdirSync(dirname(join(CLONE, file)), { recursive: true });
    cpSync(join(REPO_ROOT, file), join(CLONE, file));
  }
  symlinkSync(ROOT_NODE_MODULES, join(CLONE, 'node_modules'), 'dir');
  const tarball = join(PACKED, npmPack(CLONE, PACKED));
  entries = execFileSync('tar', ['-tzf', tarball], { encoding: 'utf8' }).split('\n').filter(Boolean).map((e) => e.replace(/^package\//, ''));
  execFileSync('tar', ['-xzf', tarball, '-C', PACKED]);
  manifest = JSON.parse(readFileSync(join(PACKED, 'package', 'package.json'), 'utf8')) as typeof manifest;
}, HANG_GUARD_MS);

it('builds both formats on npm pack of a clone (prepack) and ships them with the Lua scripts', () => {
  expect(existsSync(join(CLONE, 'dist'))).toBe(true);
  expect(entries).toEqual(
    expect.arrayContaining([
      'dist/index.js',
      'dist/index.d.ts',
      'dist/cjs/index.js',
      'dist/cjs/index.d.ts',
      'dist/cjs/package.json',
      'dist/stores/redis/lua-script.loader.js',
      'dist/cjs/stores/redis/lua-script.loader.js',
      'lua/includes/prelude.lua',
      'lua/includes/exact.lua',
      'lua/includes/driver.lua',
      'lua/erase-prefix.lua',
      'dist/testing/index.js',
      'dist/testing/index.d.ts',
      'dist/cjs/testing/index.js',
      'dist/cjs/testing/index.d.ts',
    ]),
  );
});

it('marks dist/cjs as CommonJS inside a "type": "module" package', () => {
  expect(manifest.type).toBe('module');
  expect(JSON.parse(readFileSync(join(PACKED, 'package', 'dist', 'cjs', 'package.json'), 'utf8'))).toEqual({ type: 'commonjs' });
});

it('ships the MIT LICENSE and README, and no sources, tests, build scripts or tarballs', () => {
  expect(entries).toEqual(expect.arrayContaining(['LICENSE', 'README.md', 'package.json']));
  expect(readFileSync(join(PACKED, 'package', 'LICENSE'), 'utf8')).toMatch(/^MIT License\n\nCopyright \(c\) 2026 nestjs-redis-rate-limit contributors\n/);
  expect(manifest.license).toBe('MIT');
  expect(entries.filter((e) => /^(lib|test|scripts|sample-app|node_modules)\/|^tsconfig|\.tgz$|\.tsbuildinfo$/.test(e))).toEqual([]);
});

it('carries every source inside its source map, since the maps point at lib/*.ts, which is not shipped', () => {
  const maps = entries.filter((e) => e.endsWith('.js.map'));
  expect(maps.length).toBeGreaterThan(40);
  const incomplete = maps.filter((map) => {
    const { sources, sourcesContent } = JSON.parse(readFileSync(join(PACKED, 'package', map), 'utf8')) as { sources: string[]; sourcesContent?: (string | null)[] };
    return sourcesContent?.length !== sources.length || sourcesContent.some((content) => typeof content !== 'string' || content.length === 0);
  });
  expect(incomplete).toEqual([]);
});

it('exports import, require and module-sync, each with its types, and every path it names is in the tarball', () => {
  expect(manifest.exports['.']).toEqual({
    'module-sync': { types: './dist/index.d.ts', default: './dist/index.js' },
    import: { types: './dist/index.d.ts', default: './dist/index.js' },
    require: { types: './dist/cjs/index.d.ts', default: './dist/cjs/index.js' },
  });
  // The paths the exports map names are its string values; its keys ('./testing') are subpaths, not files.
  const paths = (value: unknown): string[] => (typeof value === 'string' ? [value] : Object.values(value as object).flatMap(paths));
  const named = [manifest.main, manifest.module, manifest.types, ...paths(manifest.exports)];
  expect(named.map((path) => String(path).replace(/^\.\//, '')).filter((path) => !entries.includes(path))).toEqual([]);
});

it('exports the testing kit as nestjs-redis-rate-limit/testing, in both formats, with types for TypeScript without exports maps', () => {
  expect(manifest.exports['./testing']).toEqual({
    'module-sync': { types: './dist/testing/index.d.ts', default: './dist/testing/index.js' },
    import: { types: './dist/testing/index.d.ts', default: './dist/testing/index.js' },
    require: { types: './dist/cjs/testing/index.d.ts', default: './dist/cjs/testing/index.js' },
  });
  expect(manifest.typesVersions).toEqual({ '*': { testing: ['./dist/cjs/testing/index.d.ts'] } });
});

it('declares ioredis 5 or 6 as a peer (not a dependency), no side effects, and where the project lives', () => {
  expect(manifest.peerDependencies).toMatchObject({ ioredis: '^5.0.0 || ^6.0.0' });
  expect(manifest.dependencies).not.toHaveProperty('ioredis');
  expect(manifest.sideEffects).toBe(false);
  expect(manifest).toMatchObject({
    repository: { type: 'git', url: expect.stringMatching(/^git\+https:\/\//) },
    homepage: expect.stringMatching(/^https:\/\//),
    bugs: { url: expect.stringMatching(/^https:\/\//) },
  });
});
