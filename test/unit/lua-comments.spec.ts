import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { loadCombinedScript, loadDriverCode, loadScript, withoutComments } from '../../lib/stores/redis/lua-script.loader.js';

// The Lua sent to Redis (EVAL's source, a function library's code) carries no comment: Redis keeps a library's code
// for as long as it holds the library, in memory, snapshots and replicas. Each comment line is left empty, so that
// a line number in a Lua error still points at the same line of the assembled code.
const LUA = fileURLToPath(new URL('../../lua/', import.meta.url));
const ALGORITHMS = ['fixed-window', 'sliding-window', 'token-bucket', 'gcra', 'sliding-log'];
const COMMENT_LINE = /^[ \t]*--/m;

/** `lua/<name>.lua` with its includes in place, comments and all: what Redis was sent before. */
function assembled(name: string): string {
  const read = (file: string) => readFileSync(`${LUA}${file}.lua`, 'utf8');
  return read(name).replace(/^--- @include "([\w-]+)"\s*$/gm, (_line, include: string) => read(`includes/${include}`));
}

const lineCount = (code: string) => code.split('\n').length;

describe('the Lua sent to Redis', () => {
  it('empties comment lines and comment blocks, keeps code with a comment after it, and keeps every line where it was', () => {
    const code = ['--[[', '  Purpose.', ']]', 'local a = 1 -- why', '  -- a note', "local s = '-- not a comment'", 'return a'].join('\n');
    expect(withoutComments(code)).toBe(['', '', '', 'local a = 1 -- why', '', "local s = '-- not a comment'", 'return a'].join('\n'));
  });

  it.each(ALGORITHMS)('holds no comment line for %s, on the same lines as its source, in under 70%% of its bytes', (name) => {
    const code = loadDriverCode(name);
    const source = assembled(name);
    expect(code).not.toMatch(COMMENT_LINE);
    expect(lineCount(code)).toBe(lineCount(source));
    expect(code.length).toBeLessThan(0.7 * source.length);
    // Nothing but comments went: each line is its source's, or empty where its source's was a comment.
    const comments = commentLines(source);
    const changed = code.split('\n').flatMap((line, i) => (line === source.split('\n')[i] ? [] : [{ line, comment: comments.has(i) }]));
    expect(changed.length).toBeGreaterThan(0);
    expect(changed.filter((c) => c.line !== '' || !c.comment)).toEqual([]);
  });

  it('holds no comment line in the combined script, nor in the scripts loaded alone', () => {
    expect(loadCombinedScript(ALGORITHMS)).not.toMatch(COMMENT_LINE);
    for (const name of ['overrides', 'concurrency', 'erase-prefix', ...ALGORITHMS]) expect(loadScript(name)).not.toMatch(COMMENT_LINE);
  });
});

/** The numbers (from 0) of the lines of `source` that are comments: `-- ...` lines and `--[[ ... ]]` blocks. */
function commentLines(source: string): Set<number> {
  const comments = new Set<number>();
  let inBlock = false;
  source.split('\n').forEach((line, i) => {
    if (!inBlock && /^\s*--\[\[/.test(line)) inBlock = true;
    if (inBlock || /^\s*--/.test(line)) comments.add(i);
    if (inBlock && line.includes(']]')) inBlock = false;
  });
  return comments;
}
