import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Sandboxes for the module-format tests: `test/compat/.tmp/<name>/` holds a fixture app and a node_modules with a
 * COPY of the built package (package.json, dist/, lua/) plus, when asked, copies of other packages under other
 * names (Nest 11 from the `nest11-*` aliases). Copies, never symlinks: Node resolves a symlink to its real path and
 * would then resolve its dependencies from the repository root (Nest 12). Anything not in the sandbox (rxjs,
 * reflect-metadata, ioredis, express, ...) resolves by walking up to the repository's node_modules.
 */

export const COMPAT_DIR = dirname(fileURLToPath(import.meta.url));
export const REPO_ROOT = resolve(COMPAT_DIR, '..', '..');
export const ROOT_NODE_MODULES = join(REPO_ROOT, 'node_modules');
const TMP_DIR = join(COMPAT_DIR, '.tmp');
const FIXTURES_DIR = join(COMPAT_DIR, 'fixtures');
const PACKAGE_NAME = 'nestjs-redis-rate-limit';
/** What a published copy of the package holds (see `files` in package.json). */
const PACKAGE_ENTRIES = ['package.json', 'dist', 'lua'];

export interface SandboxOptions {
  /** Folder under test/compat/fixtures whose files are copied into the sandbox. */
  fixture: string;
  /** Extra packages: installed name (e.g. `@nestjs/core`) -> folder name under the root node_modules (`nest11-core`). */
  packages?: Record<string, string>;
}

/** Fails with a clear message when the package has not been built (the `test` script builds before jest runs). */
export function assertBuilt(): void {
  const entry = join(REPO_ROOT, 'dist', 'index.js');
  if (!existsSync(entry)) {
    throw new Error(`${entry} is missing: build the package first (npm run build), or run the whole suite with npm test.`);
  }
}

/** (Re)creates `test/compat/.tmp/<name>/` from scratch, so it can never go stale; returns its path. */
export function prepareSandbox(name: string, options: SandboxOptions): string {
  assertBuilt();
  const dir = join(TMP_DIR, name);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(join(dir, 'node_modules'), { recursive: true });

  cpSync(join(FIXTURES_DIR, options.fixture), dir, { recursive: true, dereference: true });

  const packageDir = join(dir, 'node_modules', PACKAGE_NAME);
  for (const entry of PACKAGE_ENTRIES) {
    cpSync(join(REPO_ROOT, entry), join(packageDir, entry), { recursive: true, dereference: true });
  }

  for (const [installedName, sourceName] of Object.entries(options.packages ?? {})) {
    const source = join(ROOT_NODE_MODULES, sourceName);
    if (!existsSync(join(source, 'package.json'))) {
      throw new Error(`${source} is missing: run npm install (package.json aliases it as a devDependency).`);
    }
    // Its own nested node_modules (dependencies whose versions differ from the root's) come along.
    cpSync(source, join(dir, 'node_modules', installedName), { recursive: true, dereference: true });
  }
  return dir;
}

export interface FixtureRun<T> {
  /** The JSON line the app printed last on stdout. */
  report: T;
  stdout: string;
  stderr: string;
}

/** Runs `node <entry>` in the sandbox and parses the last JSON line of its stdout. */
export function runFixture<T>(dir: string, entry: string, timeoutMs = 20_000): Promise<FixtureRun<T>> {
  return new Promise((resolveRun, reject) => {
    execFile(
      process.execPath,
      [entry],
      // Not the jest worker's NODE_OPTIONS (--experimental-vm-modules and the like): a plain node, as a user runs it.
      { cwd: dir, timeout: timeoutMs, env: { ...process.env, NODE_OPTIONS: '' }, encoding: 'utf8' },
      (error, stdout, stderr) => {
        const context = `(cwd ${dir})\n--- stdout ---\n${stdout}\n--- stderr ---\n${stderr}`;
        if (error) {
          const why = error.killed ? `was killed after ${timeoutMs} ms` : `failed (exit code ${String(error.code)})`;
          reject(new Error(`node ${entry} ${why} ${context}`));
          return;
        }
        const line = stdout.trim().split('\n').filter(Boolean).pop();
        try {
          resolveRun({ report: JSON.parse(line ?? '') as T, stdout, stderr });
        } catch {
          reject(new Error(`node ${entry} printed no JSON line ${context}`));
        }
      },
    );
  });
}
