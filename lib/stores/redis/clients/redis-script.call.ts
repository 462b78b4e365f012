import { createHash } from 'node:crypto';

/** A Lua script as this package sends it: the source for EVAL, its SHA-1 for EVALSHA. */
export interface LuaScript {
  readonly source: string;
  readonly sha: string;
}

export function luaScript(source: string): LuaScript {
  return { source, sha: createHash('sha1').update(source).digest('hex') };
}

/** Whether `error` is a server's NOSCRIPT reply (the script did not run), in any client's wording. */
export function isNoScript(error: unknown): boolean {
  return error instanceof Error && /^NOSCRIPT\b|NoScriptError/.test(error.message);
}
