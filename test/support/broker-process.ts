import { spawn, type ChildProcess } from 'node:child_process';

/**
 * Starts `command` and resolves with the process once its output (stdout or stderr) matches `ready`, or with
 * everything it printed if it exits before. The output is kept draining, so a chatty broker never blocks on a full pipe.
 */
export function spawnUntilReady(command: string, args: readonly string[], ready: RegExp): Promise<{ child: ChildProcess } | { output: string }> {
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  return new Promise((resolve) => {
    let output = '';
    const read = (chunk: Buffer) => {
      output += chunk.toString();
      if (ready.test(output)) resolve({ child });
    };
    child.stdout!.on('data', read);
    child.stderr!.on('data', read);
    child.once('exit', () => resolve({ output }));
  });
}

/** Kills the process (SIGKILL) and resolves once it has exited; at once if it already has. */
export async function killAndWait(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
}
