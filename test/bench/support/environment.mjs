// Shared plumbing of the accuracy, memory and scale benches: versions and machine for the report header, the
// BENCH_SECONDS setting, writing results, and a redis-server that dies with the bench.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import { redisServerVersion, startRedisServer } from './redis-process.mjs';

export const RESULTS_DIR = new URL('../results/', import.meta.url);

/**
 * Installed version of a package (from its package.json), or 'unknown'. A package whose `exports` hide its
 * package.json (@valkey/valkey-glide) is read from the node_modules folder its entry point resolves into.
 */
export function packageVersion(name) {
  const require = createRequire(import.meta.url);
  try {
    return require(`${name}/package.json`).version;
  } catch {
    try {
      const entry = require.resolve(name);
      const root = entry.slice(0, entry.lastIndexOf(`node_modules/${name}/`) + `node_modules/${name}/`.length);
      return JSON.parse(readFileSync(`${root}package.json`, 'utf8')).version;
    } catch {
      return 'unknown';
    }
  }
}

/** This package's version, from the repository's package.json. */
function ownVersion() {
  try {
    return JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')).version;
  } catch {
    return 'unknown';
  }
}

/** BENCH_SECONDS as ms (the measured period of one load case), or the bench's own default. */
export function measuredMs(defaultSeconds) {
  const raw = process.env.BENCH_SECONDS ?? String(defaultSeconds);
  const seconds = Number(raw);
  if (!Number.isFinite(seconds) || seconds <= 0) throw new Error(`BENCH_SECONDS must be a positive number, got ${JSON.stringify(raw)}`);
  return seconds * 1000;
}

/** A positive integer from an env var, or the default. */
export function envInteger(name, fallback) {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value <= 0) throw new Error(`${name} must be a positive integer, got ${JSON.stringify(raw)}`);
  return value;
}

/** The header every report starts with: title, date, versions, machine. `extra` lines describe the method. */
export function environmentHeader(title, redisVersion, extra = []) {
  const cpus = os.cpus();
  const versions = ['ioredis', 'rate-limiter-flexible', '@nestjs/throttler', '@nest-lab/throttler-storage-redis']
    .map((name) => `${name} ${packageVersion(name)}`)
    .join(', ');
  return [
    `# ${title}`,
    '',
    `- Date: ${new Date().toISOString()}`,
    `- Package: nestjs-redis-rate-limit ${ownVersion()}`,
    `- Node: ${process.version}; ${os.type()} ${os.release()} ${os.arch()}`,
    `- redis-server: ${redisVersion} (started by the bench on a free port: --save "" --appendonly no, 127.0.0.1)`,
    `- CPU: ${cpus[0]?.model.trim() ?? 'unknown'} x ${cpus.length} cores; load average when the report was written: ${os.loadavg().map((l) => l.toFixed(2)).join(', ')} (1, 5, 15 min)`,
    `- Clients: ${versions}`,
    ...extra.map((line) => `- ${line}`),
  ].join('\n');
}

/** Writes a results file (markdown, SVG, JSON) under test/bench/results/ and says where. */
export function writeResult(name, content) {
  mkdirSync(RESULTS_DIR, { recursive: true });
  const url = new URL(name, RESULTS_DIR);
  writeFileSync(url, content);
  process.stderr.write(`Written to ${url.pathname}\n`);
}

/**
 * Starts a throwaway redis-server and kills it however the process ends (normal exit, error, Ctrl-C), so a
 * failed bench never leaves one behind. Returns { server, version }.
 */
export async function startGuardedServer() {
  const version = redisServerVersion();
  const server = await startRedisServer();
  process.once('exit', () => server.killNow());
  for (const signal of ['SIGINT', 'SIGTERM']) {
    process.once(signal, () => {
      process.stderr.write(`\n${signal}: stopping\n`);
      server.killNow();
      process.exit(130);
    });
  }
  server.onUnexpectedExit((error) => {
    process.stderr.write(`${error.message}\n`);
    process.exit(1);
  });
  return { server, version };
}

/** Runs a bench's main and turns a failure into a message and exit code 1. */
export function runMain(label, main) {
  main().catch((error) => {
    process.stderr.write(`${label} failed: ${error?.stack ?? error}\n`);
    process.exitCode = 1;
  });
}
