import type { ChildProcess } from 'node:child_process';

/**
 * The child processes a test starts, killed after each test (SIGKILL, awaited until closed), so that a failed test
 * leaves none behind waiting for "go" and holding jest's workers open. Call at the top of a spec file; add each
 * child to the returned set as it is spawned.
 */
export function killChildrenAfterEach(): Set<ChildProcess> {
  const running = new Set<ChildProcess>();
  afterEach(async () => {
    const left = [...running].filter((child) => child.exitCode === null && child.signalCode === null);
    running.clear();
    await Promise.all(
      left.map((child) => {
        const closed = new Promise((resolve) => child.once('close', resolve));
        child.kill('SIGKILL');
        return closed;
      }),
    );
  });
  return running;
}
