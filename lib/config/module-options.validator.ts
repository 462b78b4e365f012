import proxyAddr from 'proxy-addr';
import { RateLimitConfigError } from '../rules/rate-limit-config.error.js';
import type { RateLimitHeadersMode, RateLimitModuleOptions } from '../interfaces/rate-limit-options.interface.js';
import type { RateLimitSettings } from '../interfaces/rate-limit-settings.interface.js';
import type { CreatableClientLibrary } from '../interfaces/redis-client.interface.js';
import { DEFAULT_BLOCK_CACHE_BYTES, DEFAULT_BLOCK_CACHE_KEYS } from '../resilience/local-block.cache.js';
import { checkFailurePolicy } from '../rules/define-rule.js';
import { userAgentPatterns } from './policy.compiler.js';
import { openTelemetrySettings } from './open-telemetry.option.js';

const CLIENT_LIBRARIES: readonly CreatableClientLibrary[] = ['ioredis', 'iovalkey', 'node-redis'];
const HEADER_MODES: readonly RateLimitHeadersMode[] = ['draft', 'legacy', 'both', 'per-rule', false];
const KNOWN_OPTIONS = new Set([
  'store', 'keyPrefix', 'defaultRule', 'rules', 'headers', 'trustProxy', 'ipv6Subnet', 'skip', 'errorMessage',
  'clock', 'config', 'configPath', 'refreshIntervalMs', 'failurePolicy', 'timeoutMs', 'coalesce', 'circuitBreaker',
  'blockCache', 'metrics', 'onDecision', 'onRejected', 'audit', 'startDegraded', 'ignoreUserAgents', 'getTracker', 'generateKey',
  'mode', 'shadowHeaders', 'clientLibrary', 'openTelemetry', 'functions',
]);

/** Validates everything but the rules and the store (compiled and created elsewhere); errors name the option. */
export function validateModuleOptions(options: RateLimitModuleOptions): RateLimitSettings {
  if (options === null || typeof options !== 'object') throw new RateLimitConfigError('options', options, 'an object');
  for (const field of Object.keys(options)) {
    if (MODULE_SWITCHES.has(field)) throw misplacedSwitch(field, (options as Record<string, unknown>)[field]);
    if (!KNOWN_OPTIONS.has(field)) throw new RateLimitConfigError(field, (options as Record<string, unknown>)[field], `one of the options ${[...KNOWN_OPTIONS].join(', ')}`);
  }
  const keyPrefix = options.keyPrefix ?? 'rl';
  if (typeof keyPrefix !== 'string' || keyPrefix === '' || /[{}\s]/.test(keyPrefix)) {
    throw new RateLimitConfigError('keyPrefix', keyPrefix, 'a non-empty string without "{", "}" or spaces');
  }
  const headers = options.headers ?? 'draft';
  if (!HEADER_MODES.includes(headers)) throw new RateLimitConfigError('headers', headers, '"draft", "legacy", "both", "per-rule" or false');
  const shadowHeaders = options.shadowHeaders ?? false;
  if (typeof shadowHeaders !== 'boolean') throw new RateLimitConfigError('shadowHeaders', shadowHeaders, 'true or false');
  const ipv6Subnet = options.ipv6Subnet ?? 64;
  if (!Number.isInteger(ipv6Subnet) || ipv6Subnet < 1 || ipv6Subnet > 128) {
    throw new RateLimitConfigError('ipv6Subnet', ipv6Subnet, 'an integer between 1 and 128 (prefix length in bits)');
  }
  const errorMessage = options.errorMessage ?? 'Too Many Requests';
  if (typeof errorMessage !== 'string' && typeof errorMessage !== 'function') {
    throw new RateLimitConfigError('errorMessage', errorMessage, 'a string or a function (context, detail) => string');
  }
  for (const field of ['skip', 'clock', 'onDecision', 'onRejected', 'getTracker', 'generateKey'] as const) {
    if (options[field] !== undefined && typeof options[field] !== 'function') throw new RateLimitConfigError(field, options[field], 'a function');
  }
  if (options.config !== undefined && typeof options.config?.get !== 'function') {
    throw new RateLimitConfigError('config', options.config, 'a ConfigService (an object with get(path))');
  }
  const configPath = options.configPath ?? 'rateLimit';
  if (typeof configPath !== 'string' || configPath === '') throw new RateLimitConfigError('configPath', configPath, 'a non-empty string');
  const refreshIntervalMs = options.refreshIntervalMs ?? 0;
  if (!Number.isInteger(refreshIntervalMs) || refreshIntervalMs < 0) {
    throw new RateLimitConfigError('refreshIntervalMs', refreshIntervalMs, 'an integer number of milliseconds, 0 or more');
  }
  if (refreshIntervalMs > 0 && !options.config) throw new RateLimitConfigError('refreshIntervalMs', refreshIntervalMs, '0 unless "config" is set');
  const failurePolicy = checkFailurePolicy(options.failurePolicy ?? 'memory', 'failurePolicy');
  const timeoutMs = positiveInteger(options.timeoutMs ?? 50, 'timeoutMs');
  const clientLibrary = options.clientLibrary;
  if (clientLibrary !== undefined && !CLIENT_LIBRARIES.includes(clientLibrary)) throw new RateLimitConfigError('clientLibrary', clientLibrary, `one of ${CLIENT_LIBRARIES.map((l) => `"${l}"`).join(', ')}`);
  // true asks for what leaving the option out gives: on, with the default batch size.
  const coalesceOption = options.coalesce === undefined || options.coalesce === true ? {} : options.coalesce;
  if (coalesceOption !== false && (coalesceOption === null || typeof coalesceOption !== 'object')) throw new RateLimitConfigError('coalesce', coalesceOption, 'true, false or { maxBatch? }');
  const maxBatch = coalesceOption === false ? undefined : coalesceOption.maxBatch;
  if (maxBatch !== undefined && (!Number.isInteger(maxBatch) || maxBatch < 1 || maxBatch > 10_000)) throw new RateLimitConfigError('coalesce.maxBatch', maxBatch, 'an integer from 1 to 10000');
  // Unset, the Redis store takes its client's default (DEFAULT_MAX_BATCH, or the adapter's preferredMaxBatch).
  const coalesce = coalesceOption === false ? false : maxBatch === undefined ? {} : { maxBatch };
  const functions = options.functions === undefined ? true : options.functions;
  if (typeof functions !== 'boolean') throw new RateLimitConfigError('functions', functions, 'true or false');
  const startDegraded = options.startDegraded ?? false;
  if (typeof startDegraded !== 'boolean') throw new RateLimitConfigError('startDegraded', startDegraded, 'true or false');
  const breaker = options.circuitBreaker ?? {};
  if (breaker === null || typeof breaker !== 'object') throw new RateLimitConfigError('circuitBreaker', breaker, 'an object { failureThreshold?, minOpenMs?, maxOpenMs? }');
  const circuitBreaker = {
    failureThreshold: positiveInteger(breaker.failureThreshold ?? 3, 'circuitBreaker.failureThreshold'),
    minOpenMs: positiveInteger(breaker.minOpenMs ?? 500, 'circuitBreaker.minOpenMs'),
    maxOpenMs: positiveInteger(breaker.maxOpenMs ?? 30_000, 'circuitBreaker.maxOpenMs'),
  };
  if (circuitBreaker.maxOpenMs < circuitBreaker.minOpenMs) throw new RateLimitConfigError('circuitBreaker.maxOpenMs', breaker.maxOpenMs, `at least minOpenMs (${circuitBreaker.minOpenMs})`);
  const blockCache = options.blockCache ?? true;
  if (typeof blockCache !== 'boolean' && (blockCache === null || typeof blockCache !== 'object')) throw new RateLimitConfigError('blockCache', blockCache, 'true, false or { maxKeys?, maxBytes? }');
  const blockCacheKeys = blockCache === false ? 0 : positiveInteger((blockCache === true ? undefined : blockCache.maxKeys) ?? DEFAULT_BLOCK_CACHE_KEYS, 'blockCache.maxKeys');
  const maxBytes = typeof blockCache === 'object' ? blockCache.maxBytes : undefined;
  const blockCacheBytes = maxBytes === undefined ? DEFAULT_BLOCK_CACHE_BYTES : positiveInteger(maxBytes, 'blockCache.maxBytes');
  if (options.metrics !== undefined && options.metrics !== false && (options.metrics === null || typeof options.metrics !== 'object')) {
    throw new RateLimitConfigError('metrics', options.metrics, 'false or { registry?, prefix? }');
  }
  const auditOption = options.audit ?? false;
  if (typeof auditOption !== 'boolean' && (auditOption === null || typeof auditOption !== 'object')) throw new RateLimitConfigError('audit', auditOption, 'true, false or { streamKey?, maxLen? }');
  const audit = auditOption === false ? undefined : {
    streamKey: (auditOption === true ? undefined : auditOption.streamKey) ?? `${keyPrefix}:audit`,
    maxLen: positiveInteger((auditOption === true ? undefined : auditOption.maxLen) ?? 10_000, 'audit.maxLen'),
  };
  const openTelemetry = openTelemetrySettings(options.openTelemetry);
  return {
    ...(openTelemetry ? { openTelemetry } : {}),
    failurePolicy,
    timeoutMs,
    clientLibrary,
    coalesce,
    functions,
    startDegraded,
    circuitBreaker,
    blockCacheKeys,
    blockCacheBytes,
    onDecision: options.onDecision,
    onRejected: options.onRejected,
    audit,
    keyPrefix,
    headers,
    shadowHeaders,
    trustProxy: compileTrust(options.trustProxy),
    ipv6Subnet,
    skip: options.skip,
    ...(options.ignoreUserAgents === undefined ? {} : { ignoreUserAgents: userAgentPatterns(options.ignoreUserAgents, 'ignoreUserAgents') }),
    getTracker: options.getTracker,
    generateKey: options.generateKey,
    errorMessage,
    clock: options.clock,
    config: options.config,
    configPath,
    refreshIntervalMs,
  };
}

/**
 * The module's switches (`RateLimitModuleExtras`): forRoot takes them out of its options itself, but forRootAsync
 * reads them beside `useFactory` only, so one returned by the factory (or `createRateLimitOptions`) would be lost.
 */
const MODULE_SWITCHES = new Set(['isGlobal', 'globalGuard', 'globalInterceptor']);

function misplacedSwitch(field: string, value: unknown): RateLimitConfigError {
  return new RateLimitConfigError(
    field,
    value,
    `no value in the options useFactory (or createRateLimitOptions) returns: "${field}" is an option of forRootAsync itself, beside useFactory: RateLimitModule.forRootAsync({ imports, inject, useFactory, ${field}: ${JSON.stringify(value) ?? String(value)} })`,
  );
}

function positiveInteger(value: unknown, field: string): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) throw new RateLimitConfigError(field, value, 'a positive integer');
  return value;
}

function compileTrust(value: RateLimitModuleOptions['trustProxy']): RateLimitSettings['trustProxy'] {
  if (value === undefined) return undefined;
  if (value === true) return () => true;
  if (value === false) return () => false;
  // Express counts hops the same way: `n` trusts the n nearest proxies.
  if (typeof value === 'number') {
    if (!Number.isInteger(value) || value < 0) throw new RateLimitConfigError('trustProxy', value, 'true, false, a hop count of 0 or more, or addresses / CIDR ranges');
    return (_address, hop) => hop < value;
  }
  const list = typeof value === 'string' ? value.split(',').map((s) => s.trim()) : value;
  if (!Array.isArray(list) || !list.every((s) => typeof s === 'string')) {
    throw new RateLimitConfigError('trustProxy', value, 'true, false, a hop count, or addresses / CIDR ranges');
  }
  try {
    return proxyAddr.compile(list as string[]);
  } catch (error) {
    throw new RateLimitConfigError('trustProxy', value, `addresses or CIDR ranges proxy-addr accepts (${(error as Error).message})`);
  }
}
