import type { Cluster, Redis } from 'ioredis';

/**
 * The scripts this package registers with `defineCommand`, as ioredis adds them to a client. A local view, not a
 * `declare module 'ioredis'` augmentation: that would ship in the declarations, where an app compiling both the
 * ES-module and the CommonJS declarations (a .mts and a .cts file) saw it twice (TS2374).
 */
type ScriptCommands = Record<`rateLimit${string}`, (numberOfKeys: number, ...args: (string | number)[]) => Promise<number[]>>;

/**
 * Runs a script registered with `defineCommand` (EVALSHA, ioredis sending the source once per connection and again
 * after a NOSCRIPT). ioredis cannot see a SCRIPT FLUSH sent by another client: with calls in flight across two
 * flushes, its resend can go as EVALSHA and meet NOSCRIPT again. A NOSCRIPT means the script did not run, so
 * sending the source itself (EVAL, which cannot meet NOSCRIPT) cannot count anything twice.
 */
export async function callScript(client: Redis | Cluster, command: `rateLimit${string}`, source: string, keys: readonly string[], argv: readonly (string | number)[]): Promise<number[]> {
  try {
    return await (client as unknown as ScriptCommands)[command](keys.length, ...keys, ...argv);
  } catch (error) {
    if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error;
    return (await client.eval(source, keys.length, ...keys, ...argv)) as number[];
  }
}
