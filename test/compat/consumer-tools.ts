import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort } from '../support/redis-server.js';
import { HANG_GUARD_MS, rootBin, runNode, type NodeRunOptions } from './sandbox.js';

/**
 * What a user does in a consumer project, run in a sandbox (see sandbox.ts): type-check and build with tsc, run
 * the project's jest, start the built app and call it over HTTP.
 */

/** A step's result kept for the tests that assert it (a build in beforeAll), instead of failing the hook. */
export type Outcome<T> = { ok: true; value: T } | { ok: false; error: Error };

export function settle<T>(promise: Promise<T>): Promise<Outcome<T>> {
  return promise.then((value) => ({ ok: true as const, value }), (error: Error) => ({ ok: false as const, error }));
}

/** The step's value, or its error thrown (with the tool's output in its message). */
export function valueOf<T>(outcome: Outcome<T>): T {
  if (!outcome.ok) throw outcome.error;
  return outcome.value;
}

/** `tsc -p <project>` with the given TypeScript (`typescript57` or `typescript` under the root node_modules). */
export function tsc(dir: string, typescript: string, project: string): Promise<{ stdout: string; stderr: string }> {
  return runNode(dir, [rootBin(`${typescript}/bin/tsc`), '-p', project]);
}

export interface JestRun {
  numPassedTests: number;
  numFailedTests: number;
  /** Full names of the tests that passed. */
  passed: string[];
}

/**
 * The repository's jest 30 run in the sandbox, as the project's `jest` script runs it: its config is the sandbox's
 * (package.json "jest" or `--config`), its transform the ts-jest that resolves from the sandbox. Rejects with the
 * output when a test fails.
 */
export async function runJest(dir: string, args: string[], options: NodeRunOptions = {}): Promise<JestRun> {
  const output = join(dir, `jest-results-${args.join('-').replace(/\W+/g, '_') || 'default'}.json`);
  // Its tests' default 5 s timeout is a speed check on a loaded machine: the hang guard replaces it.
  await runNode(dir, [rootBin('jest/bin/jest.js'), '--ci', '--json', '--outputFile', output, '--testTimeout', String(HANG_GUARD_MS), ...args], options);
  const results = JSON.parse(readFileSync(output, 'utf8')) as {
    numPassedTests: number;
    numFailedTests: number;
    testResults: { assertionResults: { fullName: string; status: string }[] }[];
  };
  return {
    numPassedTests: results.numPassedTests,
    numFailedTests: results.numFailedTests,
    passed: results.testResults.flatMap((file) => file.assertionResults.filter((a) => a.status === 'passed').map((a) => a.fullName)),
  };
}

export interface ServedResponse {
  status: number;
  policy: string | null;
  body: unknown;
}

/**
 * Starts `node <entry>` in the sandbox on a free PORT (as the app's main reads it), sends `paths` one after the
 * other once it answers, then stops it. Waits for the first answer up to `startTimeoutMs`; the app printing an
 * error and exiting ends the wait at once.
 */
export async function serve(dir: string, entry: string, paths: string[], env: Record<string, string> = {}, startTimeoutMs = HANG_GUARD_MS): Promise<ServedResponse[]> {
  const port = await freePort();
  const child = spawn(process.execPath, [entry], { cwd: dir, env: { ...process.env, NODE_OPTIONS: '', ...env, PORT: String(port) }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<never>((_resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`node ${entry} exited (code ${String(code)}) before answering (cwd ${dir})\n${output}`)));
  });
  exited.catch(() => undefined);
  try {
    await Promise.race([waitForAnswer(port, startTimeoutMs, () => output), exited]);
    const responses: ServedResponse[] = [];
    for (const path of paths) {
      const response = await fetch(`http://127.0.0.1:${port}${path}`);
      const text = await response.text();
      responses.push({ status: response.status, policy: response.headers.get('ratelimit-policy'), body: parse(text) });
    }
    return responses;
  } finally {
    child.kill('SIGTERM');
  }
}

/** Polls with HEAD / until the server answers at all (any status), so no rate-limited route is spent on it. */
async function waitForAnswer(port: number, timeoutMs: number, output: () => string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      await fetch(`http://127.0.0.1:${port}/__not_a_route__`, { method: 'HEAD' });
      return;
    } catch {
      if (Date.now() > deadline) throw new Error(`No answer on port ${port} after ${timeoutMs} ms\n${output()}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
