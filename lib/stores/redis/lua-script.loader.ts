import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';

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

/** An algorithm's script with its `--- @include "x"` lines replaced by `lua/includes/x.lua` (as BullMQ does). */
export function loadScript(name: string): string {
  return read(name).replace(INCLUDE, (_line, include: string) => read(join('includes', include)));
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

/** One script holding every algorithm, for `consumeAll` over rules of different algorithms in one round trip. */
export function loadCombinedScript(names: readonly string[]): string {
  return [
    '-- All rate-limit algorithms behind one driver, assembled from lua/*.lua by lua-script.loader.ts.',
    read(join('includes', 'prelude')),
    read(join('includes', 'exact')),
    ...names.map(body),
    read(join('includes', 'driver')),
  ].join('\n');
}
