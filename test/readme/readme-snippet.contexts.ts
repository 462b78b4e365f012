import { readFileSync } from 'node:fs';
import ts from 'typescript';

/**
 * A generated line: prelude text (a string), or the index of a line of the snippet (a number), so that a
 * diagnostic on a generated file can be reported at its README line.
 */
export type GeneratedLine = string | number;

/**
 * How a README fragment becomes a compilable file. A context is chosen per block by `<!-- snippet: <name> -->`
 * on the line above its fence; a block without one is `module`. Every context starts with the common import
 * prelude, so blocks need not repeat imports. The stand-ins each context declares are the names README
 * fragments lean on (`this.users`, `phone`, `plans`), typed as narrowly as the prose implies: a block that needs
 * more should be made complete instead.
 */
export const SNIPPET_CONTEXTS: Record<string, (lines: string[]) => GeneratedLine[]> = {
  /** A whole file (the default). */
  module: (lines) => lines.map((_, i) => i),

  /**
   * Statements in an async method of an injectable service that has `this.limits` (a RateLimitService, unless
   * the block opens with its own `constructor(...)` line, which then stays in the class body), `this.users`,
   * `this.sms`, and the request's values as locals.
   */
  'service-calls': (lines) => {
    const ctor = lines.findIndex((l) => l.trim() !== '');
    const ownConstructor = ctor >= 0 && lines[ctor]!.trimStart().startsWith('constructor(');
    const body = lines.map((_, i) => i).filter((i) => !(ownConstructor && i === ctor));
    return [
      '@Injectable()',
      'export class ReadmeSnippet {',
      '  declare readonly users: { verify(name: string, password: string): Promise<boolean> };',
      '  declare readonly sms: { send(phone: string, code: string): Promise<void> };',
      ownConstructor ? ctor : '  constructor(private readonly limits: RateLimitService) {}',
      '  async run(ip: string, name: string, password: string, phone: string, code: string,',
      '    key: string, rule: RuleRef, rules: RuleRef[], configService: ConfigService): Promise<void> {',
      ...body,
      '  }',
      '}',
    ];
  },

  /** Members of a controller class (handlers with their decorators). */
  'class-body': (lines) => ['@Controller()', 'export class ReadmeSnippet {', ...lines.map((_, i) => i), '}'],

  /** Decorators on a controller handler; `plans.of(context)` stands in for the app's plan lookup. */
  decorator: (lines) => [
    "declare const plans: { of(context: ExecutionContext): Promise<'free' | 'pro'> };",
    '@Controller()',
    'export class ReadmeSnippet {',
    ...lines.map((_, i) => i),
    '  handler() {}',
    '}',
  ],

  /**
   * A jest e2e test file of an app: jest's globals, and `AppModule` standing in for the app's root module (the
   * block's own import of it, from `../src/app.module`, is dropped).
   */
  'e2e-test': (lines) => [
    "import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';",
    '@Module({})',
    'class AppModule {}',
    ...lines.map((_, i) => i).filter((i) => !/^import \{ AppModule \} from '[./]+\/src\/app\.module(\.js)?';$/.test(lines[i]!.trim())),
  ],

  /** An object literal: the options of `RateLimitModule.forRoot`. */
  options: (lines) => ['RateLimitModule.forRoot(', ...lines.map((_, i) => i), ');'],
};

/**
 * Names imported by the common prelude, by module; the library's are read from lib/index.ts. Types are imported
 * as `type X`: under isolatedModules with decorator metadata, a type in a decorated signature must be (TS1272).
 */
function preludeModules(libraryIndex: string): [string, string[]][] {
  return [
    ['nestjs-redis-rate-limit', exportedNames(libraryIndex)],
    [
      '@nestjs/common',
      ['Body', 'Controller', 'Delete', 'type ExecutionContext', 'Get', 'HttpException', 'Inject', 'Injectable', 'Module',
        'Param', 'Patch', 'Post', 'Put', 'Query', 'Req', 'UnauthorizedException', 'UseGuards'],
    ],
    ['@nestjs/core', ['APP_FILTER', 'APP_GUARD', 'NestFactory', 'Reflector']],
    ['@nestjs/config', ['ConfigModule', 'ConfigService', 'registerAs']],
    ['ioredis', ['Cluster', 'Redis']],
  ];
}

/**
 * The common import prelude: everything the library exports, plus the usual Nest, config and ioredis names,
 * less the names the block imports itself (a block that is a whole file keeps its own imports).
 */
export function importPrelude(libraryIndex: string, code: string): string[] {
  const own = importedNames(code);
  return preludeModules(libraryIndex).map(([from, names]) => {
    const kept = names.filter((n) => !own.has(n.replace(/^type /, '')));
    return kept.length === 0 ? '' : `import { ${kept.join(', ')} } from '${from}';`;
  });
}

/** The names a module file exports through `export { ... }` / `export type { ... }` (what lib/index.ts uses), types as `type X`. */
function exportedNames(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest);
  const names: string[] = [];
  for (const statement of source.statements) {
    if (ts.isExportDeclaration(statement) && statement.exportClause && ts.isNamedExports(statement.exportClause)) {
      for (const element of statement.exportClause.elements) {
        names.push(statement.isTypeOnly || element.isTypeOnly ? `type ${element.name.text}` : element.name.text);
      }
    }
  }
  return names;
}

function importedNames(code: string): Set<string> {
  const source = ts.createSourceFile('snippet.ts', code, ts.ScriptTarget.Latest);
  const names = new Set<string>();
  for (const statement of source.statements) {
    const clause = ts.isImportDeclaration(statement) ? statement.importClause : undefined;
    if (!clause) continue;
    if (clause.name) names.add(clause.name.text);
    const bindings = clause.namedBindings;
    if (bindings && ts.isNamespaceImport(bindings)) names.add(bindings.name.text);
    if (bindings && ts.isNamedImports(bindings)) for (const element of bindings.elements) names.add(element.name.text);
  }
  return names;
}
