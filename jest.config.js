/**
 * Jest runs the TypeScript sources as native ES modules (Nest 12 is ESM-only), so it is started with
 * `node --experimental-vm-modules` (see the `test` script). Type checking is done once by `tsc` before
 * jest runs, which lets ts-jest transpile each file on its own.
 */
export default {
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  // The sample app imports the package by name, as users do; under jest that is the sources.
  moduleNameMapper: {
    '^(\\.{1,2}/.*)\\.js$': '$1',
    '^nestjs-redis-rate-limit$': '<rootDir>/lib/index.ts',
    '^nestjs-redis-rate-limit/testing$': '<rootDir>/lib/testing/index.ts',
  },
  transform: {
    '^.+\\.ts$': ['ts-jest', { useESM: true, tsconfig: 'tsconfig.json' }],
  },
  testMatch: ['<rootDir>/test/**/*.spec.ts'],
  // The compat fixtures' own tests run inside their sandboxes, under the fixture's jest config.
  testPathIgnorePatterns: ['/node_modules/', '<rootDir>/test/compat/fixtures/'],
  modulePathIgnorePatterns: ['<rootDir>/test/compat/.tmp', '<rootDir>/dist'],
  globalSetup: '<rootDir>/test/support/global-setup.js',
  testTimeout: 30000,
  maxWorkers: 2,
  // A worker's heap grows with every test file it runs (each file's ES modules, most of it garbage V8 has not collected
  // yet): near 1 GB after a full run, which Node then takes over a second to free at exit on a loaded machine, past
  // jest's 500 ms ("A worker process has failed to exit gracefully"), though nothing was left open. A worker whose
  // heap passes 400 MB after a file is replaced by a fresh one, and the exit gets 2 s: a handle left open still
  // outlasts that, and is still reported.
  workerIdleMemoryLimit: '400MB',
  workerGracefulExitTimeout: 2000,
};
