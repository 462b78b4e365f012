import { createHash } from 'node:crypto';

/** A Lua script as this package sends it: the source for EVAL, its SHA-1 for EVALSHA. */
export interface LuaScript {
  readonly source: string;
  readonly sha: string;
  /**
   * The same code as a function library (Redis 7+, Valkey), for an adapter that can call it with FCALL: `name` is
   * both the library's and its one function's, `library` what FUNCTION LOAD takes. A library's code is made once,
   * when it is loaded, where an EVAL makes the script's functions and tables anew on every call.
   */
  readonly fn?: { readonly name: string; readonly library: string };
}

export function luaScript(source: string, fn?: LuaScript['fn']): LuaScript {
  return { source, sha: createHash('sha1').update(source).digest('hex'), fn };
}

/** Whether `error` is a server's reply that the function called does not exist there (it did not run). */
export function isNoFunction(error: unknown): boolean {
  return error instanceof Error && /(?:^ERR |ResponseError: )Function not found\b/i.test(error.message);
}

/** Whether `error` is a server's NOSCRIPT reply (the script did not run), in any client's wording. */
export function isNoScript(error: unknown): boolean {
  return error instanceof Error && /^NOSCRIPT\b|NoScriptError/.test(error.message);
}
