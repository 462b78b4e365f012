import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { compileSnippets } from './readme-snippet.compiler.js';
import { extractSnippets } from './readme-snippet.extractor.js';

/**
 * Every ```ts block of README.md type-checks under the project's strict settings against the library's
 * sources, so the README cannot drift from the API. A fragment names its context with
 * `<!-- snippet: <context> -->` above its fence (see readme-snippet.contexts.ts).
 */
const root = fileURLToPath(new URL('../../', import.meta.url));
const snippets = extractSnippets(readFileSync(root + 'README.md', 'utf8'));
let diagnostics: string[][] = [];

beforeAll(() => {
  diagnostics = compileSnippets(snippets, { root, outDir: root + 'test/readme/.tmp/readme', markdownName: 'README.md' });
});

describe('README TypeScript snippets', () => {
  it('finds the TypeScript blocks of the README', () => {
    expect(snippets.length).toBeGreaterThanOrEqual(10);
  });

  it.each(snippets.map((s, i) => [`${s.heading} (README.md:${s.line}): ${s.firstLine.slice(0, 80)}`, i] as const))(
    'compiles under strict: %s',
    (_name, i) => {
      expect(diagnostics[i]!.join('\n')).toBe('');
    },
  );
});
