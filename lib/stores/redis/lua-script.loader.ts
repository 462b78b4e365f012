import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import { luaScript, type LuaScript } from './clients/redis-script.call.js';

/**
 * `lua/` sits at the package root, which is three levels above this file in the sources (lib/stores/redis) and the
 * ES-module build (dist/stores/redis), four in the CommonJS build (dist/cjs/stores/redis). That build is compiled from this
 * same file, with `import.meta.url` replaced by the CommonJS module's own URL (scripts/build-cjs.mjs).
 */
function findLuaDir(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  const candidates = [join(here, '..', '..', '..', 'lua'), join(here, '..', '..', '..', '..', 'lua')];
  const found = candidates.find((dir) => existsSync(join(dir, 'includes', 'prelude.lua')));
  if (!found) throw new Error(`The rate-limit Lua scripts are missing: looked for lua/includes/prelude.lua in ${candidates.join(' and ')} (the package's "lua" folder must be installed beside "dist")`);
  return found;
}

// Looked up on the first script read, so that an app on the memory store never needs lua/.
let luaDir: string | undefined;
const INCLUDE = /^--- @include "([\w-]+)"\s*$/gm;

const sources = new Map<string, string>();

/** A file of `lua/`, read once per process however many stores are built. */
function read(name: string): string {
  let source = sources.get(name);
  if (source === undefined) {
    source = readFileSync(join((luaDir ??= findLuaDir()), `${name}.lua`), 'utf8');
    sources.set(name, source);
  }
  return source;
}

/** A script's code with its `--- @include "x"` lines replaced by `lua/includes/x.lua` (as BullMQ does). */
function code(name: string): string {
  return read(name).replace(INCLUDE, (_line, include: string) => read(join('includes', include)));
}

/**
 * `code` with its comment lines emptied, so that a line number in a Lua error still points into the assembled code:
 * comments are about half of the source, which Redis keeps for every library it holds (in memory, snapshots and
 * replicas) and an EVAL carries. Only whole lines go: a line opening with `--`, or a `--[[ ... ]]` block that opens
 * one. The scripts hold no long string (`[[ ... ]]`), in which such a line would be text.
 */
export function withoutComments(source: string): string {
  return source.replace(/^[ \t]*--\[\[[\s\S]*?\]\]/gm, (block) => block.replace(/[^\n]/g, '')).replace(/^[ \t]*--.*$/gm, '');
}

/** The head of the driver's function (lua/includes/driver.lua), which a function library registers. */
const DRIVER_HEAD = '\nlocal function decide(KEYS, ARGV)\n';

/**
 * Code that includes the driver, as an EVAL's script: the driver's body is the script's own, not a function made on
 * every call to be called once (2,500 Redis instructions of a lone call). Its `return`s then end the script.
 */
function asScriptBody(driverCode: string): string {
  const head = driverCode.lastIndexOf(DRIVER_HEAD);
  const end = driverCode.lastIndexOf('\nend');
  if (head < 0 || end < head || driverCode.slice(end + 4).trim() !== '') throw new Error('lua/includes/driver.lua must be one function, decide(KEYS, ARGV), at the end of the script');
  return `${driverCode.slice(0, head)}\n${driverCode.slice(head + DRIVER_HEAD.length, end)}\n`;
}

/** A script's source for EVAL: its code with its includes in place. */
export function loadScript(name: string): string {
  const assembled = withoutComments(code(name));
  return read(name).includes('--- @include "driver"') ? asScriptBody(assembled) : assembled;
}

/**
 * A script of the driver's (`driverCode` ends with the driver, `decide`) for EVAL, and the same code as a function
 * library that registers `decide`, both named after the EVAL script's SHA-1 (`rrl_<sha>`): instances of two versions of
 * this package share a server without calling each other's code. `flags`: the script's flags (a shebang for EVAL, the
 * function's flags in the library), e.g. 'allow-cross-slot-keys'. `functions: false`: for EVAL only, no library.
 */
export function decisionScript(driverCode: string, { functions = true, flags }: { functions?: boolean; flags?: string } = {}): LuaScript {
  const script = luaScript(`${flags ? `#!lua flags=${flags}\n` : ''}${asScriptBody(driverCode)}`);
  if (!functions) return script;
  const name = `rrl_${script.sha}`;
  const register = `redis.register_function{function_name = '${name}', callback = decide${flags ? `, flags = { '${flags}' }` : ''}}`;
  return { ...script, fn: { name, library: `#!lua name=${name}\n${driverCode}\n${register}\n` } };
}

/** An algorithm's code with its includes, the driver a function (see decisionScript). */
export function loadDriverCode(name: string): string {
  return withoutComments(code(name));
}

/** The part of an algorithm's script between its includes: the code that registers it with the driver. */
function body(name: string): string {
  const source = read(name);
  const start = source.indexOf('--- @include "prelude"');
  const end = source.indexOf('--- @include "driver"');
  if (start < 0 || end < start) throw new Error(`lua/${name}.lua must include "prelude" then "driver"`);
  // The combined script has every include once, before the bodies.
  return source.slice(start + '--- @include "prelude"'.length, end).replace(INCLUDE, '');
}

/** The code of one script holding every algorithm, for `consumeAll` over rules of different algorithms in one round trip. */
export function loadCombinedScript(names: readonly string[]): string {
  return withoutComments(
    [
      read(join('includes', 'prelude')),
      read(join('includes', 'exact')),
      ...names.map(body),
      read(join('includes', 'driver')),
    ].join('\n'),
  );
}
