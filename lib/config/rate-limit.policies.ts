import { compileConfigPart, configParts, DEFAULT_PART, partPath, RULE_PART, snapshot, type ConfigPart } from './config-part.compiler.js';
import { RULE_NAME } from '../rules/define-rule.js';
import { checkDefaultNames, compileRules, defaultNameField, type CompiledRules } from './policy.compiler.js';
import { RateLimitConfigError } from '../rules/rate-limit-config.error.js';
import type { RateLimitPolicy } from '../interfaces/rate-limit-policy.interface.js';
import type { RateLimitConfigReader, RateLimitMode, RateLimitPolicyOptions, RateLimitRulesConfig } from '../interfaces/rate-limit-options.interface.js';

/** A part of the config namespace in force, with the text of the value it was compiled from. */
interface PartInForce {
  readonly seen: string;
  readonly part: ConfigPart;
}

/** What a config reload did, part by part (`RateLimitPolicies.reloadFromConfig`). */
export interface ConfigReload {
  /** Where the changes put in force are written, e.g. `rateLimit.rules.search`. */
  readonly applied: readonly string[];
  /** The changes refused: where, why, and whether a last valid version of that part stays in force. */
  readonly refused: readonly { readonly path: string; readonly error: RateLimitConfigError; readonly kept: boolean }[];
}

/** A config reader that can also be written to, as ConfigService can. */
type WritableConfig = RateLimitConfigReader & { set?(path: string, value: unknown): unknown };

/**
 * The rules in force. The guard and the service read them on every request, so a rule replaced at run time
 * (from ConfigService, or `setRule`) applies to the next request; `version` tells caches that something changed.
 */
export class RateLimitPolicies {
  private current: CompiledRules;
  private readonly code: CompiledRules;
  private readonly codeNameField: (index: number) => string;
  /** The parts of the config namespace in force, by key (`mode`, `defaultRule`, `rules.<name>`). */
  private parts: ReadonlyMap<string, PartInForce>;
  private revision = 0;
  private required: ReadonlySet<string> = new Set();

  /**
   * @param configPath where the rules live in `config`: prefixes the fields of error messages ('' without config)
   * @param config written by `setRule`, so that the config and the rules in force agree
   */
  constructor(
    fromCode: RateLimitRulesConfig,
    fromConfig?: RateLimitRulesConfig,
    private readonly configPath = '',
    private readonly config?: RateLimitConfigReader,
  ) {
    this.code = compileRules(fromCode);
    this.codeNameField = defaultNameField(fromCode.defaultRule, 'defaultRule');
    this.parts = this.compileAll(fromConfig, configPath);
    this.current = this.assemble(this.parts, configPath);
  }

  /** Bumped on every replacement. */
  get version(): number {
    return this.revision;
  }

  /** The mode of rules that set none: config's `mode`, else the module option's, else `'enforce'`. */
  get mode(): RateLimitMode {
    return this.current.mode ?? 'enforce';
  }

  /** Whether a policy is in shadow mode now: its own mode, else the module's. */
  isShadow(policy: Pick<RateLimitPolicy, 'mode'>): boolean {
    return (policy.mode ?? this.current.mode) === 'shadow';
  }

  /** The rules every route gets, in order (`defaultRule`: one rule named `'default'`, or a list of named rules). */
  get defaults(): readonly RateLimitPolicy[] {
    return this.current.defaults;
  }

  /** The named rule or default rule of this name, or undefined. `'default'` names the single default rule. */
  get(name: string): RateLimitPolicy | undefined {
    return this.current.named.get(name) ?? this.current.defaults.find((policy) => policy.name === name);
  }

  /** The names `get` knows: the named rules, then the default rules. */
  names(): string[] {
    return [...this.current.named.keys(), ...this.current.defaults.map((policy) => policy.name)];
  }

  /** Names that decorators refer to: a config reload that drops one of them is refused. */
  require(names: Iterable<string>): void {
    this.required = new Set(names);
    this.checkRequired(this.current, 'rules');
  }

  /**
   * Puts a rule in force now, for the next request: `'default'` is the default rule (`defaultRule`), any other
   * name a named rule (created if new). An invalid rule throws a `RateLimitConfigError` naming the field and
   * changes nothing; a valid one is also written to the module's ConfigService (at `<configPath>.rules.<name>`
   * or `<configPath>.defaultRule`), so that the config and the rules in force agree.
   */
  setRule(name: string, options: RateLimitPolicyOptions): RateLimitPolicy {
    if (typeof name !== 'string' || !RULE_NAME.test(name)) {
      throw new RateLimitConfigError(partPath('rules', this.configPath), name, 'a rule name of 1-64 letters, digits, "_", "." or "-", or "default" for the default rule');
    }
    const key = name === 'default' ? DEFAULT_PART : `${RULE_PART}${name}`;
    const parts = new Map(this.parts).set(key, { seen: snapshot(options), part: compileConfigPart(key, options, this.configPath) });
    this.put(this.assemble(parts, this.configPath), parts);
    this.writeToConfig(name, options);
    return this.get(name)!;
  }

  /**
   * Replaces the rules read from configuration, all or nothing: a validation error throws (naming the field)
   * and leaves the rules in force untouched.
   */
  replaceFromConfig(fromConfig: RateLimitRulesConfig | undefined, configPath = this.configPath): void {
    const parts = this.compileAll(fromConfig, configPath);
    this.put(this.assemble(parts, configPath), parts);
  }

  /**
   * Applies a new config namespace part by part (`mode`, `defaultRule`, each rule of `rules`): each changed part
   * that is valid, with the rest, goes into force; one that is not keeps its last valid version (or stays out,
   * if new) and is reported, without holding back the others. Parts that did not change are not compiled again,
   * except those still refused, which are retried (a change elsewhere may have resolved a conflict).
   */
  reloadFromConfig(fromConfig: RateLimitRulesConfig | undefined, configPath = this.configPath): ConfigReload {
    const next = configParts(fromConfig);
    // A namespace, or `rules`, that is not an object says nothing of the parts inside it: they stay as they are.
    const covered = (key: string) => next.has('') || (next.has('rules') && key.startsWith(RULE_PART));
    const changes = new Map<string, PartInForce | undefined>();
    const refused = new Map<string, RateLimitConfigError>();
    for (const key of new Set([...this.parts.keys(), ...next.keys()])) {
      const value = next.get(key);
      if (value === undefined && covered(key)) continue;
      const seen = value === undefined ? undefined : snapshot(value);
      if (seen === this.parts.get(key)?.seen) continue;
      try {
        changes.set(key, seen === undefined ? undefined : { seen, part: compileConfigPart(key, value, configPath) });
      } catch (error) {
        if (!(error instanceof RateLimitConfigError)) throw error;
        refused.set(key, error);
      }
    }
    // Each change is tried on what is in force plus the changes accepted so far; a refused one is tried again
    // once another went in, so that the order of the parts never decides (a rename out of a conflict, say).
    let parts = this.parts;
    let compiled = this.current;
    for (let progress = true; progress && changes.size > 0; ) {
      progress = false;
      for (const [key, change] of changes) {
        const trial = new Map(parts);
        if (change) trial.set(key, change);
        else trial.delete(key);
        try {
          compiled = this.assemble(trial, configPath);
        } catch (error) {
          if (!(error instanceof RateLimitConfigError)) throw error;
          refused.set(key, error);
          continue;
        }
        parts = trial;
        changes.delete(key);
        refused.delete(key);
        progress = true;
      }
    }
    const applied = [...this.parts.keys(), ...parts.keys()].filter((key, i, all) => all.indexOf(key) === i && this.parts.get(key) !== parts.get(key));
    if (applied.length > 0) this.put(compiled, parts);
    return {
      applied: applied.map((key) => partPath(key, configPath)),
      refused: [...refused].map(([key, error]) => ({ path: partPath(key, configPath), error, kept: this.parts.has(key) })),
    };
  }

  private put(compiled: CompiledRules, parts: ReadonlyMap<string, PartInForce>): void {
    this.current = compiled;
    this.parts = parts;
    this.revision++;
  }

  /** Every part of a namespace, or the first error, in the order the checks of `compileRules` run. */
  private compileAll(fromConfig: RateLimitRulesConfig | undefined, configPath: string): Map<string, PartInForce> {
    const parts = new Map<string, PartInForce>();
    for (const [key, value] of configParts(fromConfig)) parts.set(key, { seen: snapshot(value), part: compileConfigPart(key, value, configPath) });
    return parts;
  }

  /**
   * The rules of the code with the parts of the config over them, rule by rule (`defaultRule` in config replaces
   * every default rule of the code). Throws on what no part can see alone: a default rule and a named rule of
   * one name, or a rule that decorators refer to gone.
   */
  private assemble(parts: ReadonlyMap<string, PartInForce>, configPath: string): CompiledRules {
    const named = new Map(this.code.named);
    let { defaults, defaultGiven, mode } = this.code;
    let nameField = this.codeNameField;
    for (const { part } of parts.values()) {
      if (part.kind === 'rule') named.set(part.policy.name, part.policy);
      else if (part.kind === 'mode') mode = part.mode;
      else {
        defaults = part.defaults;
        nameField = part.nameField;
        defaultGiven = true;
      }
    }
    checkDefaultNames(defaults, named, nameField);
    const rules: CompiledRules = { defaults, defaultGiven, named, ...(mode ? { mode } : {}) };
    this.checkRequired(rules, partPath('rules', configPath));
    return rules;
  }

  private checkRequired(rules: CompiledRules, path: string): void {
    for (const name of this.required) {
      if (!rules.named.has(name) && !rules.defaults.some((policy) => policy.name === name)) {
        throw new RateLimitConfigError(`${path}.${name}`, undefined, 'a rule: @RateLimit decorators refer to it');
      }
    }
  }

  /** ConfigService's `set()` takes a dotted path: a rule whose name has a dot is written with all of `rules`. */
  private writeToConfig(name: string, options: RateLimitPolicyOptions): void {
    const config = this.config as WritableConfig | undefined;
    if (typeof config?.set !== 'function') return;
    if (name === 'default') {
      config.set(partPath(DEFAULT_PART, this.configPath), options);
    } else if (name.includes('.')) {
      const rules = config.get(partPath('rules', this.configPath));
      config.set(partPath('rules', this.configPath), { ...(rules !== null && typeof rules === 'object' ? rules : {}), [name]: options });
    } else {
      config.set(partPath(`${RULE_PART}${name}`, this.configPath), options);
    }
  }
}
