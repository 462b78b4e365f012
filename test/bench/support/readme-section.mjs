// Rewrites one generated section of the repository's README.md: the text between `<!-- bench:<name> -->` and
// `<!-- /bench:<name> -->`. Everything outside the markers is the maintainers' and is left as it is.
import { readFileSync, writeFileSync } from 'node:fs';

const README = new URL('../../../README.md', import.meta.url);

/** Replaces the section's body; says so on stderr, or why not (no markers: nothing is written). */
export function writeReadmeSection(name, body) {
  const open = `<!-- bench:${name} -->`;
  const close = `<!-- /bench:${name} -->`;
  const text = readFileSync(README, 'utf8');
  const start = text.indexOf(open);
  const end = text.indexOf(close);
  if (start < 0 || end < start) {
    process.stderr.write(`README.md has no ${open} ... ${close} markers: its ${name} section was not rewritten\n`);
    return;
  }
  writeFileSync(README, `${text.slice(0, start + open.length)}\n${body.trim()}\n${text.slice(end)}`);
  process.stderr.write(`README.md: ${name} section rewritten\n`);
}
