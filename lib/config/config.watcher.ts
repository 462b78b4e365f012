import { Inject, Injectable, Logger, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { RATE_LIMIT_SETTINGS } from '../rate-limit.constants.js';
import { RateLimitPolicies } from './rate-limit.policies.js';
import type { RateLimitSettings } from './module-options.validator.js';
import type { RateLimitRulesConfig } from '../interfaces/rate-limit-options.interface.js';

/** Reads the rules from the ConfigService namespace (validated by the caller). */
export function readRulesConfig(settings: RateLimitSettings): RateLimitRulesConfig | undefined {
  const value = settings.config?.get(settings.configPath);
  return value === undefined || value === null ? undefined : (value as RateLimitRulesConfig);
}

/**
 * Keeps the rules in step with ConfigService: `set()` on a path under the namespace (through `changes$`) and,
 * if `refreshIntervalMs` is set, a periodic re-read (for config objects changed without `set()`). A new config
 * that fails validation is logged, naming the field, and the rules in force stay.
 */
@Injectable()
export class RateLimitConfigWatcher implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger('RateLimit');
  private subscription?: { unsubscribe(): void };
  private timer?: ReturnType<typeof setInterval>;
  private lastSeen?: string;

  constructor(
    @Inject(RATE_LIMIT_SETTINGS) private readonly settings: RateLimitSettings,
    private readonly policies: RateLimitPolicies,
  ) {}

  onModuleInit(): void {
    const { config, configPath, refreshIntervalMs } = this.settings;
    if (!config) return;
    this.lastSeen = snapshot(readRulesConfig(this.settings));
    this.subscription = config.changes$?.subscribe(({ path }) => {
      if (path === configPath || path.startsWith(`${configPath}.`)) this.refresh();
    });
    if (refreshIntervalMs > 0) {
      this.timer = setInterval(() => this.refresh(), refreshIntervalMs);
      this.timer.unref?.();
    }
  }

  onModuleDestroy(): void {
    this.subscription?.unsubscribe();
    if (this.timer) clearInterval(this.timer);
  }

  /** Re-reads the namespace now; returns whether new rules were put in force. */
  refresh(): boolean {
    const next = readRulesConfig(this.settings);
    const seen = snapshot(next);
    if (seen === this.lastSeen) return false;
    this.lastSeen = seen;
    try {
      this.policies.replaceFromConfig(next, this.settings.configPath);
      this.logger.log(`Rate limit rules reloaded from config "${this.settings.configPath}"`);
      return true;
    } catch (error) {
      this.logger.error(`Refused new rate limit config; the previous rules stay in force. ${(error as Error).message}`);
      return false;
    }
  }
}

/**
 * Config objects are mutated in place by `set()`, so changes are detected on a serialised copy; a RegExp
 * (`ignoreUserAgents`) is written as its source, which JSON alone would write as `{}` whatever it matches.
 */
function snapshot(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => (typeof v === 'function' ? `[function ${(v as () => void).name}]` : v instanceof RegExp ? String(v) : v)) ?? '';
}
