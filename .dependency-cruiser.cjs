/**
 * The layering of lib/, checked in `npm test` (`npm run layers`). A decision's path reads guard, service,
 * resilience, store, port, script; each folder may import only the folders below it:
 *
 *   testing/ (the testing kit, published as nestjs-redis-rate-limit/testing: above the module, it may import anything)
 *   lib/*.ts (module, guard, service)
 *   decorators/   rpc/ (microservice messages, read as requests through http's key resolver)   http/   config/ (module
 *   options, factories)   overrides/   observability/   waiting/ (waitToConsume's queues, which call back into the
 *   service and import no store)   budgets/ (local budgets of rules with localBudget, spent with no store call)   resilience/
 *   stores/leases/   stores/redis/   stores/memory/   stores/redis/clients/ (the port and one adapter per library)
 *   stores/ (what every store shares)   shadow/   keys/   rules/   algorithms/   interfaces/ (the ground)
 *
 * Only the client adapters import a client library at run time; interfaces/ names ioredis's option types (a
 * type-only import) for the options the module creates an ioredis client from.
 */

/** Top to bottom; a folder may import those after it. */
const LAYERS = [
  'testing',
  'decorators',
  'rpc',
  'http',
  'config',
  'overrides',
  'observability',
  'waiting',
  'budgets',
  'resilience',
  'stores/leases',
  'stores/redis',
  'stores/memory',
  'stores/redis/clients',
  'stores',
  'shadow',
  'keys',
  'rules',
  'algorithms',
  'interfaces',
];

const CLIENT_LIBRARIES = '^(ioredis|iovalkey|redis|@valkey/valkey-glide)$';

/** A path pattern of the files directly in `folder` (not in its sub-folders). */
const inFolder = (folder) => `^lib/${folder}/[^/]+$`;

/** Folders above lib/*.ts (the module, guard and service), which they may import too. */
const ABOVE_THE_MODULE = new Set(['testing']);
const MODULE_FILES = '^lib/[^/]+$';

const layerRules = LAYERS.map((folder, i) => ({
  name: `layer-${folder.replace(/\//g, '-')}`,
  comment: `lib/${folder} imports only the folders below it: ${LAYERS.slice(i + 1).join(', ') || 'none'}`,
  severity: 'error',
  from: { path: inFolder(folder) },
  to: {
    path: '^lib/',
    pathNot: [inFolder(folder), ...LAYERS.slice(i + 1).map(inFolder), ...(ABOVE_THE_MODULE.has(folder) ? [MODULE_FILES] : [])],
  },
}));

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'No import cycles in lib/.',
      severity: 'error',
      from: { path: '^lib/' },
      to: { circular: true },
    },
    ...layerRules,
    {
      name: 'testing-kit-apart',
      comment: 'Nothing of the main entry imports the testing kit: it ships as its own entry (nestjs-redis-rate-limit/testing).',
      severity: 'error',
      from: { path: '^lib/', pathNot: '^lib/testing/' },
      to: { path: '^lib/testing/' },
    },
    {
      name: 'redis-and-memory-stores-apart',
      comment: 'The Redis store and the memory store share only lib/stores (the plan and the checks of a call).',
      severity: 'error',
      from: { path: '^lib/stores/(redis|memory)/' },
      to: { path: '^lib/stores/(redis|memory)/', pathNot: '^lib/stores/$1/' },
    },
    {
      name: 'client-libraries-in-adapters-only',
      comment: 'Only the client adapters (lib/stores/redis/clients) import a Redis client library at run time.',
      severity: 'error',
      from: { path: '^lib/', pathNot: '^lib/stores/redis/clients/' },
      to: { path: CLIENT_LIBRARIES, dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'no-unresolvable',
      comment: 'Every import of lib/ resolves.',
      severity: 'error',
      from: { path: '^lib/' },
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    includeOnly: '^lib/|node_modules',
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default', 'types'], extensions: ['.ts', '.js', '.d.ts'] },
    moduleSystems: ['es6', 'cjs'],
  },
};
