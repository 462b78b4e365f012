import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { type GeneratedLine, importPrelude, SNIPPET_CONTEXTS } from './readme-snippet.contexts.js';
import type { ReadmeSnippet } from './readme-snippet.extractor.js';

export interface SnippetCompileOptions {
  /** The project root: its tsconfig.json gives the compiler options, its lib/index.ts the package. */
  root: string;
  /** Where the generated files go; emptied first. */
  outDir: string;
  /** How diagnostics name the markdown file, e.g. 'README.md'. */
  markdownName: string;
}

/**
 * Wraps every snippet in its context, writes one .ts file per snippet and type-checks them all in one Program,
 * with the project's compiler options (strict, NodeNext, decorators), `types: ['node']` and the package name
 * mapped to lib/index.ts as tsconfig.json maps it. Returns each snippet's diagnostics, in order, each one
 * located at its line in the markdown file (`README.md:12:5 TS2353 ...`); an empty list means it compiles.
 * Errors inside lib/ are not reported here: they belong to the library's own type-check.
 */
export function compileSnippets(snippets: readonly ReadmeSnippet[], options: SnippetCompileOptions): string[][] {
  const libraryIndex = join(options.root, 'lib/index.ts');
  rmSync(options.outDir, { recursive: true, force: true });
  mkdirSync(options.outDir, { recursive: true });

  const files = snippets.map((snippet, i) => {
    const file = join(options.outDir, `snippet-${String(i + 1).padStart(2, '0')}.ts`);
    const wrap = SNIPPET_CONTEXTS[snippet.context];
    const codeLines = snippet.code.split('\n');
    const lines: GeneratedLine[] = wrap ? [...importPrelude(libraryIndex, snippet.code), ...wrap(codeLines)] : [];
    writeFileSync(file, `// ${options.markdownName}:${snippet.line} (${snippet.context})\n` + lines.map((l) => (typeof l === 'number' ? codeLines[l] : l)).join('\n') + '\n');
    return { file, lines: ['', ...lines] as GeneratedLine[], known: wrap !== undefined };
  });

  const program = ts.createProgram({ rootNames: files.map((f) => f.file), options: compilerOptions(options.root, libraryIndex) });
  const shared = [...program.getOptionsDiagnostics(), ...program.getGlobalDiagnostics()].map((d) => flatten(d.messageText));

  return files.map(({ file, lines, known }, i) => {
    const snippet = snippets[i]!;
    if (!known) {
      return [`${options.markdownName}:${snippet.line}: unknown snippet context "${snippet.context}" (expected one of ${Object.keys(SNIPPET_CONTEXTS).join(', ')})`];
    }
    const source = program.getSourceFile(file)!;
    const diagnostics = [...program.getSyntacticDiagnostics(source), ...program.getSemanticDiagnostics(source)];
    return [
      ...shared,
      ...diagnostics.map((d) => {
        const at = d.start === undefined ? undefined : source.getLineAndCharacterOfPosition(d.start);
        const mapped = at === undefined ? undefined : lines[at.line];
        const where = typeof mapped === 'number'
          ? `${options.markdownName}:${snippet.line + mapped}:${at!.character + 1}`
          : `${relative(options.root, file)}:${(at?.line ?? 0) + 1} (generated)`;
        return `${where} TS${d.code} ${flatten(d.messageText)}`;
      }),
    ];
  });
}

function compilerOptions(root: string, libraryIndex: string): ts.CompilerOptions {
  const configFile = join(root, 'tsconfig.json');
  const { config } = ts.readConfigFile(configFile, ts.sys.readFile);
  const { options } = ts.parseJsonConfigFileContent(config, ts.sys, root, undefined, configFile);
  return {
    ...options,
    noEmit: true,
    declaration: false,
    sourceMap: false,
    // A user's app has Node's types, not jest's.
    types: ['node'],
    paths: { 'nestjs-redis-rate-limit': [libraryIndex], 'nestjs-redis-rate-limit/testing': [join(root, 'lib/testing/index.ts')] },
  };
}

function flatten(message: string | ts.DiagnosticMessageChain): string {
  return ts.flattenDiagnosticMessageText(message, '\n  ');
}
