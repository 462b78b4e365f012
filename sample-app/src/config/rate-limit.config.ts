import { registerAs } from '@nestjs/config';
import type { RateLimitAlgorithm, RateLimitRulesConfig } from 'nestjs-redis-rate-limit';
import { env, optionalEnv, type EnvSource } from './env.js';
import { API_KEY_RULE, LOGIN_IP_RULE, LOGIN_USER_RULE, REPORTS_RULE, SEARCH_RULE, SMS_DAY_RULE, SMS_HOUR_RULE, SMS_MINUTE_RULE, SMS_PROVIDER_RULE } from './rule-names.js';

/**
 * The path the library reads its rules from (`configPath`, whose default is this), and where
 * `RateLimitPolicies.setRule()` (the admin API) writes the rules it changes. It may hold only `defaultRule` and `rules`.
 */
export const RATE_LIMIT_CONFIG = 'rateLimit';

/**
 * The rules, from env vars with defaults. Values stay strings ("5", "1m"): the library parses them and, when one
 * is invalid, stops the app at start-up naming the field (e.g. `rateLimit.rules.login-ip.limit`).
 */
export const rateLimitConfig = (source: () => EnvSource) =>
  registerAs(RATE_LIMIT_CONFIG, (): RateLimitRulesConfig => {
    const vars = source();
    const refill = optionalEnv(vars, 'RATE_LIMIT_API_KEY_REFILL');
    // A lockout that doubles with each round of guessing (1 min, 2, 4, ...) up to a day, and is forgotten after a quiet day.
    const loginLockout = () => ({ base: env(vars, 'RATE_LIMIT_LOGIN_LOCKOUT', '1m'), factor: 2, max: env(vars, 'RATE_LIMIT_LOGIN_LOCKOUT_MAX', '1d'), forgetAfter: '1d' });
    return {
      // Every guarded route, per client IP and per route (the global guard applies it).
      defaultRule: {
        limit: env(vars, 'RATE_LIMIT_DEFAULT_LIMIT', '60'),
        window: env(vars, 'RATE_LIMIT_DEFAULT_WINDOW', '1m'),
        // Checked by the library, which names the allowed values when this one is not among them.
        algorithm: env(vars, 'RATE_LIMIT_DEFAULT_ALGORITHM', 'sliding-window') as RateLimitAlgorithm,
      },
      rules: {
        // Login attempts (a success takes its own back): an exact log, since the limits are small and every attempt
        // matters, with an escalating lockout.
        [LOGIN_IP_RULE]: { limit: env(vars, 'RATE_LIMIT_LOGIN_IP_LIMIT', '5'), window: env(vars, 'RATE_LIMIT_LOGIN_IP_WINDOW', '1m'), algorithm: 'sliding-log', lockout: loginLockout() },
        [LOGIN_USER_RULE]: { limit: env(vars, 'RATE_LIMIT_LOGIN_USER_LIMIT', '3'), window: env(vars, 'RATE_LIMIT_LOGIN_USER_WINDOW', '1m'), algorithm: 'sliding-log', lockout: loginLockout() },
        [SMS_MINUTE_RULE]: { limit: env(vars, 'RATE_LIMIT_SMS_MINUTE_LIMIT', '1'), window: '1m', algorithm: 'sliding-log' },
        [SMS_HOUR_RULE]: { limit: env(vars, 'RATE_LIMIT_SMS_HOUR_LIMIT', '5'), window: '1h', algorithm: 'sliding-log' },
        [SMS_DAY_RULE]: { limit: env(vars, 'RATE_LIMIT_SMS_DAY_LIMIT', '10'), window: '1d', algorithm: 'sliding-log' },
        // Reports other services ask for over the microservice transport, per tenant.
        [REPORTS_RULE]: { limit: env(vars, 'RATE_LIMIT_REPORTS_LIMIT', '5'), window: env(vars, 'RATE_LIMIT_REPORTS_WINDOW', '1m') },
        // What the SMS provider accepts from this app, all instances together: sends wait for it (PacedSmsProvider).
        [SMS_PROVIDER_RULE]: { limit: env(vars, 'RATE_LIMIT_SMS_PROVIDER_LIMIT', '10'), window: env(vars, 'RATE_LIMIT_SMS_PROVIDER_WINDOW', '1s'), algorithm: 'fixed-window' },
        // What the search backend takes from the whole fleet: one key every instance hits. Each instance takes units of it
        // ahead once it is hot and spends them with no round trip, never admitting above the limit (see the README's
        // "Hot keys"); on the memory store the option changes nothing.
        [SEARCH_RULE]: {
          limit: env(vars, 'RATE_LIMIT_SEARCH_LIMIT', '1000'),
          window: env(vars, 'RATE_LIMIT_SEARCH_WINDOW', '1s'),
          algorithm: 'fixed-window',
          localBudget: { maxUnits: env(vars, 'RATE_LIMIT_SEARCH_TAKE', '10') },
        },
        // Per API key: bursts up to the bucket's size, then `refill` tokens per window. An operator can raise one
        // customer's bucket or block one key at run time (admin/overrides.controller.ts).
        [API_KEY_RULE]: {
          limit: env(vars, 'RATE_LIMIT_API_KEY_LIMIT', '10'),
          window: env(vars, 'RATE_LIMIT_API_KEY_WINDOW', '1m'),
          algorithm: 'token-bucket',
          overrides: true,
          ...(refill === undefined ? {} : { refill }),
        },
      },
    };
  });
