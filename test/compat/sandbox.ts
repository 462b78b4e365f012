import { execFile, execFileSync } from 'node:child_process';
import { copyFileSync, cpSync, existsSync, mkdirSync, rmSync, symlinkSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * How long a tool the compat suites run (tsc, a jest run, an app) may take before it is taken for hung, in ms: a guard,
 * not a speed check. On a loaded machine tsc and a nested jest run take several times longer than on a quiet one (a
 * load run beside helpers' test runs, load average 19 on 2 cores: tsc past 60 s, a nested jest past 30 s).
 */
export const HANG_GUARD_MS = 600_000;

/**
 * Sandboxes for the compatibility tests: `test/compat/.tmp/<name>/` holds a fixture app and a node_modules with
 * the package installed from the tarball `npm pack` makes of this repository (what a user downloads), plus, when
 * asked, copies of other packages under other names (Nest 11 from the `nest11-*` aliases, ioredis 5 from
 * `ioredis5`). Copies, never symlinks: Node resolves a symlink to its real path and would then resolve its
 * dependencies from the repository root (Nest 12). Anything not in the sandbox (rxjs, reflect-metadata, ioredis 6,
 * express, jest, ...) resolves by walking up to the repository's node_modules, so nothing is downloaded.
 */

export const COMPAT_DIR = dirname(fileURLToPath(import.meta.url));
export const REPO_ROOT = resolve(COMPAT_DIR, '..', '..');
export const ROOT_NODE_MODULES = join(REPO_ROOT, 'node_modules');
export const TMP_DIR = join(COMPAT_DIR, '.tmp');
const FIXTURES_DIR = join(COMPAT_DIR, 'fixtures');
export const PACKAGE_NAME = 'nestjs-redis-rate-limit';

export interface SandboxOptions {
  /** Folder under test/compat/fixtures whose files are copied into the sandbox. */
  fixture: string;
  /**
   * Fixture files (`client.ts`) the sandbox holds as an ES module and a CommonJS module instead (`client.mts`,
   * `client.cts`): one source for a user's code in both formats.
   */
  twins?: string[];
  /** Extra packages: installed name (e.g. `@nestjs/core`) -> folder name under the root node_modules (`nest11-core`). */
  packages?: Record<string, string>;
  /**
   * Packages linked rather than copied, for tools without dependencies of their own whose real path does not
   * matter (`typescript` -> `typescript57`, so that a copied ts-jest compiles with TypeScript 5.7).
   */
  links?: Record<string, string>;
}

/** Fails with a clear message when the package has not been built (the `test` script builds before jest runs). */
export function assertBuilt(): void {
  for (const entry of [join(REPO_ROOT, 'dist', 'index.js'), join(REPO_ROOT, 'dist', 'cjs', 'index.js')]) {
    if (!existsSync(entry)) {
      throw new Error(`${entry} is missing: build the package first (npm run build), or run the whole suite with npm test.`);
    }
  }
}

let tarball: string | undefined;

/**
 * The tarball `npm pack` makes of this repository, once per test process. Its prepack build is skipped: the
 * `test` script has just built dist/ (package-contents.spec.ts packs a fresh copy with prepack instead).
 */
export function packedTarball(): string {
  if (tarball) return tarball;
  assertBuilt();
  const destination = join(TMP_DIR, `pack-${process.pid}`);
  rmSync(destination, { recursive: true, force: true });
  mkdirSync(destination, { recursive: true });
  tarball = join(destination, npmPack(REPO_ROOT, destination, ['--ignore-scripts']));
  return tarball;
}

/** Runs `npm pack` in `dir` into `destination`; returns the tarball's file name. */
export function npmPack(dir: string, destination: string, extraArgs: string[] = []): string {
  let stdout: string;
  try {
    stdout = execFileSync('npm', ['pack', '--json', '--pack-destination', destination, ...extraArgs], {
      cwd: dir,
      encoding: 'utf8',
      env: { ...process.env, NODE_OPTIONS: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
      maxBuffer: 64 * 1024 * 1024,
    });
  } catch (error) {
    // tsc reports on stdout: without it, a failed prepack build would say only "command failed".
    const { stdout: out, stderr } = error as { stdout?: string; stderr?: string };
    throw new Error(`npm pack failed in ${dir}\n--- stdout ---\n${out ?? ''}\n--- stderr ---\n${stderr ?? ''}`);
  }
  // Lifecycle scripts (prepack) print to stdout before the JSON report.
  const [report] = JSON.parse(stdout.slice(stdout.indexOf('\n[') + 1 || 0)) as { filename: string }[];
  return report.filename;
}

/** (Re)creates `test/compat/.tmp/<name>/` from scratch, so it can never go stale; returns its path. */
export function prepareSandbox(name: string, options: SandboxOptions): string {
  const dir = join(TMP_DIR, name);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(join(dir, 'node_modules'), { recursive: true });

  cpSync(join(FIXTURES_DIR, options.fixture), dir, { recursive: true, dereference: true });
  for (const source of options.twins ?? []) {
    for (const extension of ['.mts', '.cts']) copyFileSync(join(dir, source), join(dir, source.replace(/\.ts$/, extension)));
    rmSync(join(dir, source));
  }

  // What `npm install <tarball>` puts in node_modules; its dependencies resolve from the repository's.
  const packageDir = join(dir, 'node_modules', PACKAGE_NAME);
  mkdirSync(packageDir, { recursive: true });
  execFileSync('tar', ['-xzf', packedTarball(), '-C', packageDir, '--strip-components=1']);

  for (const [installedName, sourceName] of Object.entries(options.packages ?? {})) {
    // Its own nested node_modules (dependencies whose versions differ from the root's) come along.
    cpSync(rootPackage(sourceName), join(dir, 'node_modules', installedName), { recursive: true, dereference: true });
  }
  for (const [installedName, sourceName] of Object.entries(options.links ?? {})) {
    mkdirSync(dirname(join(dir, 'node_modules', installedName)), { recursive: true });
    symlinkSync(rootPackage(sourceName), join(dir, 'node_modules', installedName), 'dir');
  }
  return dir;
}

function rootPackage(name: string): string {
  const source = join(ROOT_NODE_MODULES, name);
  if (!existsSync(join(source, 'package.json'))) {
    throw new Error(`${source} is missing: run npm install (package.json lists it as a devDependency).`);
  }
  return source;
}

export interface FixtureRun<T> {
  /** The JSON line the app printed last on stdout. */
  report: T;
  stdout: string;
  stderr: string;
}

/** Runs `node <entry>` in the sandbox and parses the last JSON line of its stdout. */
export async function runFixture<T>(dir: string, entry: string, timeoutMs = HANG_GUARD_MS, env: Record<string, string> = {}): Promise<FixtureRun<T>> {
  const { stdout, stderr } = await runNode(dir, [entry], { timeoutMs, env });
  const line = stdout.trim().split('\n').filter(Boolean).pop();
  try {
    return { report: JSON.parse(line ?? '') as T, stdout, stderr };
  } catch {
    throw new Error(`node ${entry} printed no JSON line (cwd ${dir})\n--- stdout ---\n${stdout}\n--- stderr ---\n${stderr}`);
  }
}

export interface NodeRunOptions {
  /** Extra environment variables. */
  env?: Record<string, string>;
  /** Node's own flags (`--experimental-vm-modules`), as a user would put them in NODE_OPTIONS. @default none */
  nodeOptions?: string;
  /** @default HANG_GUARD_MS */
  timeoutMs?: number;
}

/**
 * Runs `node <args>` in `dir`, as a user would in their project: not with the jest worker's NODE_OPTIONS. Rejects,
 * with both outputs, when it exits non-zero.
 */
export function runNode(dir: string, args: string[], options: NodeRunOptions = {}): Promise<{ stdout: string; stderr: string }> {
  const timeoutMs = options.timeoutMs ?? HANG_GUARD_MS;
  const env: NodeJS.ProcessEnv = { ...process.env, NODE_OPTIONS: options.nodeOptions ?? '', ...options.env };
  // A jest inside a jest worker would otherwise take itself for a worker.
  delete env.JEST_WORKER_ID;
  return new Promise((resolveRun, reject) => {
    execFile(process.execPath, args, { cwd: dir, timeout: timeoutMs, env, encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (error) {
        const why = error.killed ? `was killed after ${timeoutMs} ms` : `failed (exit code ${String(error.code)})`;
        reject(new Error(`node ${args.join(' ')} ${why} (cwd ${dir})\n--- stdout ---\n${stdout}\n--- stderr ---\n${stderr}`));
        return;
      }
      resolveRun({ stdout, stderr });
    });
  });
}

/** A command-line tool of a package under the root node_modules (`typescript57/bin/tsc`), for `runNode`. */
export function rootBin(path: string): string {
  return join(ROOT_NODE_MODULES, path);
}
