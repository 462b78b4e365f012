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

/** The child's next line of output; fails once its output has ended without one ('close': every line read). */
export function nextLine(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let buffer = '';
    const onData = (chunk: Buffer) => {
      buffer += chunk.toString();
      const i = buffer.indexOf('\n');
      if (i < 0) return;
      child.stdout!.off('data', onData);
      child.off('close', onClose);
      resolve(buffer.slice(0, i));
    };
    // Not 'exit': it can come before the last output is read.
    const onClose = (code: number | null, signal: string | null) => reject(new Error(`child process ended (code ${code}, signal ${signal}) without a line`));
    child.stdout!.on('data', onData);
    child.once('close', onClose);
  });
}
