import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';

/** `lua/` sits two levels above this file both in the sources (lib/stores) and in the build (dist/stores). */
const LUA_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'lua');
const INCLUDE = /^--- @include "([\w-]+)"\s*$/gm;

const sources = new Map<string, string>();

/** A file of `lua/`, read once per process however many stores are built. */
function read(name: string): string {
  let source = sources.get(name);
  if (source === undefined) {
    source = readFileSync(join(LUA_DIR, `${name}.lua`), 'utf8');
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
  return source.slice(start + '--- @include "prelude"'.length, end);
}

/** One script holding every algorithm, for `consumeAll` over rules of different algorithms in one round trip. */
export function loadCombinedScript(names: readonly string[]): string {
  return [
    '-- All rate-limit algorithms behind one driver, assembled from lua/*.lua by lua-script.loader.ts.',
    read(join('includes', 'prelude')),
    ...names.map(body),
    read(join('includes', 'driver')),
  ].join('\n');
}
