import { registerAs } from '@nestjs/config';
import { randomBytes } from 'node:crypto';
import { booleanEnv, env, msEnv, optionalEnv, portEnv, type EnvSource } from './env.js';

/** Everything but the rate-limit rules (those have their own namespace, which the library reads). */
export interface AppConfig {
  host: string;
  port: number;
  /** Port of the app's microservice (Nest's TCP transport, on `host`): MICROSERVICE_PORT, 3001 by default. */
  microservicePort: number;
  /** Unset: the embedded memory store (one process only). */
  redisUrl?: string;
  /** Prefix of every rate-limit key, so several apps (or test runs) can share one Redis. */
  keyPrefix: string;
  /** Longest wait for Redis before the failure policy decides, in ms (RATE_LIMIT_TIMEOUT_MS). Unset: the module's default, 50. */
  timeoutMs?: number;
  /** Bearer token of the admin API: ADMIN_TOKEN, or one generated at start-up (and printed) when it is unset. */
  adminToken: string;
  /** Whether `adminToken` was generated because ADMIN_TOKEN is unset. */
  adminTokenGenerated: boolean;
  /** Makes the stub SMS provider fail every send, to show that failed sends are refunded. */
  smsProviderFail: boolean;
}

export const APP_CONFIG = 'app';

export const appConfig = (source: () => EnvSource) =>
  registerAs(APP_CONFIG, (): AppConfig => {
    const vars = source();
    const adminToken = optionalEnv(vars, 'ADMIN_TOKEN');
    return {
      host: env(vars, 'HOST', '127.0.0.1'),
      port: portEnv(vars, 'PORT', 3000),
      microservicePort: portEnv(vars, 'MICROSERVICE_PORT', 3001),
      redisUrl: optionalEnv(vars, 'REDIS_URL'),
      keyPrefix: env(vars, 'RATE_LIMIT_KEY_PREFIX', 'sample'),
      timeoutMs: msEnv(vars, 'RATE_LIMIT_TIMEOUT_MS'),
      // Without .env the admin API still works: with a token of this run, printed at start-up.
      adminToken: adminToken ?? randomBytes(18).toString('base64url'),
      adminTokenGenerated: adminToken === undefined,
      smsProviderFail: booleanEnv(vars, 'SMS_PROVIDER_FAIL', false),
    };
  });
