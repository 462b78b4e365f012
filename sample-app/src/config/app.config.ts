import { registerAs } from '@nestjs/config';
import { booleanEnv, env, optionalEnv, portEnv, type EnvSource } from './env.js';

/** Everything but the rate-limit rules (those have their own namespace, which the library reads). */
export interface AppConfig {
  host: string;
  port: number;
  /** Unset: the embedded memory store (one process only). */
  redisUrl?: string;
  /** Prefix of every rate-limit key, so several apps (or test runs) can share one Redis. */
  keyPrefix: string;
  /** Unset: the admin API refuses every request. */
  adminToken?: string;
  /** Makes the stub SMS provider fail every send, to show that failed sends are refunded. */
  smsProviderFail: boolean;
}

export const APP_CONFIG = 'app';

export const appConfig = (source: () => EnvSource) =>
  registerAs(APP_CONFIG, (): AppConfig => {
    const vars = source();
    return {
      host: env(vars, 'HOST', '127.0.0.1'),
      port: portEnv(vars, 'PORT', 3000),
      redisUrl: optionalEnv(vars, 'REDIS_URL'),
      keyPrefix: env(vars, 'RATE_LIMIT_KEY_PREFIX', 'sample'),
      adminToken: optionalEnv(vars, 'ADMIN_TOKEN'),
      smsProviderFail: booleanEnv(vars, 'SMS_PROVIDER_FAIL', false),
    };
  });
