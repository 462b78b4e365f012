import { Inject, Injectable, Logger, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { RATE_LIMIT_SETTINGS } from '../interfaces/rate-limit.constants.js';
import { snapshot } from './config-part.compiler.js';
import { RateLimitPolicies, type ConfigReload } from './rate-limit.policies.js';
import type { RateLimitSettings } from '../interfaces/rate-limit-settings.interface.js';
import type { RateLimitRulesConfig } from '../interfaces/rate-limit-options.interface.js';

/** Reads the rules from the ConfigService namespace (validated by the caller). */
export function readRulesConfig(settings: RateLimitSettings): RateLimitRulesConfig | undefined {
  const value = settings.config?.get(settings.configPath);
  return value === undefined || value === null ? undefined : (value as RateLimitRulesConfig);
}

/**
 * Keeps the rules in step with ConfigService: `set()` on a path under the namespace (through `changes$`) and,
 * if `refreshIntervalMs` is set, a periodic re-read (for config objects changed without `set()`). Each part of
 * the namespace (`mode`, `defaultRule`, each rule of `rules`) is applied on its own: a part that fails validation
 * keeps its last valid version and is logged, naming the field, once per distinct bad value; valid changes to
 * the other parts go into force all the same.
 */
@Injectable()
export class RateLimitConfigWatcher implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger('RateLimit');
  private subscription?: { unsubscribe(): void };
  private timer?: ReturnType<typeof setInterval>;
  private lastSeen?: string;
  /** The message last logged for each part still refused: the same refusal is not logged again. */
  private reported = new Map<string, string>();

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

  /** Re-reads the namespace now; returns whether new rules were put in force (some parts may have been refused). */
  refresh(): boolean {
    const next = readRulesConfig(this.settings);
    const seen = snapshot(next);
    if (seen === this.lastSeen) return false;
    this.lastSeen = seen;
    let reload: ConfigReload;
    try {
      reload = this.policies.reloadFromConfig(next, this.settings.configPath);
    } catch (error) {
      // Not a validation error (those are per part): nothing of this config is put in force.
      this.logger.error(`Refused new rate limit config; the rules in force stay. ${(error as Error).message}`);
      return false;
    }
    this.report(reload.refused);
    if (reload.applied.length === 0) return false;
    this.logger.log(`Rate limit rules reloaded from config: ${reload.applied.join(', ')}`);
    return true;
  }

  private report(refused: ConfigReload['refused']): void {
    const now = new Map<string, string>();
    for (const { path, error, kept } of refused) {
      now.set(path, error.message);
      if (this.reported.get(path) === error.message) continue;
      const outcome = kept ? 'its last valid version stays in force' : 'it is not put in force';
      this.logger.error(`Refused the rate limit config at "${path}"; ${outcome}, and the other changes apply. ${error.message}`);
    }
    this.reported = now;
  }
}
