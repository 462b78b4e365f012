/**
 * The CommonJS build (dist/cjs), for apps and test runners that load the package with require() and cannot load
 * an ES module that way: a Nest 11 app under jest, TypeScript before 5.8 with `module: nodenext` (TS1479).
 * Compiled from the same sources as the ES-module build (dist) with tsconfig.cjs.json; the one ES-module-only
 * expression the sources use, `import.meta.url` (lua-script.loader.ts finds lua/ with it), becomes the
 * CommonJS module's own file URL. The ES-module build has already type-checked these sources, so only the
 * errors this build adds (syntax, declarations, CommonJS-only) are reported here.
 */
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const CONFIG = join(ROOT, 'tsconfig.cjs.json');
// "'import.meta' is not allowed in files which will build into CommonJS output": the transformer below replaces it.
const IMPORT_META_IN_COMMONJS = 1343;

/** `import.meta.url` -> `require("node:url").pathToFileURL(__filename).href`. */
function importMetaUrl(context) {
  const f = context.factory;
  const visit = (node) => {
    if (
      ts.isPropertyAccessExpression(node) &&
      ts.isMetaProperty(node.expression) &&
      node.expression.keywordToken === ts.SyntaxKind.ImportKeyword &&
      node.name.text === 'url'
    ) {
      const url = f.createCallExpression(f.createIdentifier('require'), undefined, [f.createStringLiteral('node:url')]);
      const toFileUrl = f.createCallExpression(f.createPropertyAccessExpression(url, 'pathToFileURL'), undefined, [f.createIdentifier('__filename')]);
      return f.createPropertyAccessExpression(toFileUrl, 'href');
    }
    return ts.visitEachChild(node, visit, context);
  };
  return (sourceFile) => ts.visitNode(sourceFile, visit);
}

const config = ts.getParsedCommandLineOfConfigFile(CONFIG, {}, {
  ...ts.sys,
  onUnRecoverableConfigFileDiagnostic: (diagnostic) => report([diagnostic]),
});
if (config.errors.length > 0) report(config.errors);

const program = ts.createProgram({ rootNames: config.fileNames, options: config.options });
const emitted = program.emit(undefined, undefined, undefined, false, { before: [importMetaUrl] });
const diagnostics = [
  ...program.getOptionsDiagnostics(),
  ...program.getSyntacticDiagnostics(),
  ...emitted.diagnostics,
].filter((d) => d.code !== IMPORT_META_IN_COMMONJS);
if (diagnostics.length > 0 || emitted.emitSkipped) report(diagnostics);

// The root package.json says "type": "module"; this one makes Node and TypeScript read dist/cjs as CommonJS.
writeFileSync(join(config.options.outDir, 'package.json'), `${JSON.stringify({ type: 'commonjs' }, null, 2)}\n`);

function report(list) {
  const host = { getCanonicalFileName: (f) => f, getCurrentDirectory: () => ROOT, getNewLine: () => '\n' };
  process.stderr.write(ts.formatDiagnosticsWithColorAndContext(list, host));
  process.exit(1);
}
