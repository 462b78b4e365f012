import type { ExecutionContext } from '@nestjs/common';
import type { ClusterNode, ClusterOptions, RedisOptions } from './ioredis-options.interface.js';
import type { CreatableClientLibrary, RedisClientLike } from './redis-client.interface.js';
import type { CircuitBreakerOptions } from './circuit-breaker.interface.js';
import type { RateLimitMetricsOptions } from './metrics.interface.js';
import type { RateLimitOpenTelemetryOptions } from './open-telemetry.interface.js';
import type { RejectionAuditOptions } from './audit.interface.js';
import type { Clock } from './clock.interface.js';
import type { MultiDecision } from './decision.interface.js';
import type { RateLimitErrorDetail } from './rate-limit-error-detail.interface.js';
import type { Duration, FailurePolicy, RateLimitRuleOptions } from './rule.interface.js';
import type { RateLimitStore } from './store.interface.js';
import type { HttpRequestLike } from './http-request.interface.js';

/** Computes a tracker from the request; `undefined`, `null` or `''` means "cannot tell" (see `keyRequired`). */
export type RateLimitKeyFunction = (context: ExecutionContext) => string | number | null | undefined | Promise<string | number | null | undefined>;

/**
 * What a rule counts per: the client IP, the authenticated user (`request.user.id`, else `.sub`), a header, a
 * route param, a query parameter, a body field (dots reach into nested objects), or a function.
 */
export type RateLimitKey = 'ip' | 'user' | `header:${string}` | `param:${string}` | `query:${string}` | `body:${string}` | RateLimitKeyFunction;

/**
 * A value, or a function of the request's execution context returning it, sync or async (throttler's
 * `Resolvable`): e.g. `limit: async (ctx) => (await plan(ctx)) === 'pro' ? 10_000 : 100`.
 */
export type Resolvable<T> = T | ((context: ExecutionContext) => T | Promise<T>);

/**
 * Whether a rule's refusals refuse: `'enforce'` refuses the request; `'shadow'` decides and counts as usual but
 * admits the request, reporting the refusal as a shadow one (metrics `result="shadow_rejected"`, `onRejected`
 * with `shadow: true`, the audit stream's `shadow` field). For trying out a rule on live traffic before enforcing it.
 */
export type RateLimitMode = 'enforce' | 'shadow';

/**
 * What becomes of an `@EventPattern` message a rule refuses; its handler never runs. `'drop'`: the message is left
 * to the transport, which acknowledged it on delivery (on RabbitMQ with `noAck: false` it stays unacknowledged:
 * use one of the others there). `'redeliver'`: handed back to be delivered again where the transport can (RabbitMQ
 * with `noAck: false`: `nack` with requeue, once the wait has passed, at most a second later), dropped elsewhere.
 * `'reject'`: RabbitMQ with `noAck: false`: `nack` without requeue (to the queue's dead-letter exchange, if it has
 * one), dropped elsewhere.
 */
export type RefusedEvents = 'drop' | 'redeliver' | 'reject';

/** Per-rule exemption: the rule is neither charged nor reported for a request this returns true for. */
export type RateLimitSkipIf = (context: ExecutionContext) => boolean | Promise<boolean>;

/**
 * A rule plus how the guard applies it to a request. `limit`, `window`, `blockMs` and `cost` may be functions
 * of the request (resolved and validated per request by the guard; `RateLimitService` refuses them, having no request).
 */
export interface RateLimitPolicyOptions extends Omit<RateLimitRuleOptions, 'limit' | 'window' | 'blockMs'> {
  /** Requests admitted per `window` (token bucket: capacity; GCRA: count per period). Positive integer, or a function of the request. */
  limit: Resolvable<number | string>;
  /** Length of the window (token bucket: the time `refill` tokens take to come back; GCRA: the period), or a function of the request. Required except for `algorithm: 'concurrency'`. */
  window?: Resolvable<Duration>;
  /** Once this rule refuses a tracker, refuse it for this long (ms or a duration string, or a function of the request). 0 = off. @default 0 */
  blockMs?: Resolvable<Duration>;
  /** What the rule counts per. @default 'ip' */
  key?: RateLimitKey;
  /** Units each request takes (an integer of 1 or more), or a function of the request. @default 1 */
  cost?: Resolvable<number | string>;
  /** Share one budget per tracker across every route using this rule, instead of one per route. @default false */
  shared?: boolean;
  /** Answer 400 when the key cannot be resolved, instead of counting per client IP under a separate namespace. @default false */
  keyRequired?: boolean;
  /** Requests for which this returns true are neither charged nor reported by this rule (the others still apply). @default none */
  skipIf?: RateLimitSkipIf;
  /** Requests whose `User-Agent` matches one of these are neither charged nor reported by this rule. @default none */
  ignoreUserAgents?: readonly RegExp[];
  /**
   * `'shadow'`: the rule is decided and charged as usual, but its refusal does not refuse the request (see
   * `RateLimitMode`); it neither refuses nor stops the other rules of the request from charging. Not part of the
   * rule's keys: switching modes keeps its counts. @default the module's `mode` ('enforce')
   */
  mode?: RateLimitMode;
  /** Microservices: what becomes of an `@EventPattern` message this rule refuses (see `RefusedEvents`). @default 'drop' */
  refusedEvents?: RefusedEvents;
}

/** One of several default rules: a rule with its name, as `@nestjs/throttler` lists them. */
export interface RateLimitNamedPolicyOptions extends RateLimitPolicyOptions {
  /** The rule's name, unique among the default rules and the named `rules`; `@RateLimit` and `@SkipRateLimit` refer to it. */
  name: string;
}

/**
 * `@RateLimit(...)` options: a rule written in place (`limit` and `window` given), or, with only `name` and
 * guard fields (`key`, `cost`, `shared`, `keyRequired`), a reference to the named rule of the module options.
 */
export interface RateLimitDecoratorOptions extends Partial<RateLimitPolicyOptions> {
  /** Rule name: a handler's rule replaces the class's rule and the default rule of the same name. Unnamed = `'default'`. */
  name?: string;
}

/**
 * Which rate-limit headers responses carry: `'draft'` the IETF `RateLimit-Policy` / `RateLimit` fields, one
 * member per rule; `'legacy'` `X-RateLimit-Limit` / `-Remaining` / `-Reset` of the most restrictive rule;
 * `'both'`; `'per-rule'` those three for every rule as `@nestjs/throttler` names them
 * (`X-RateLimit-Remaining-<rule>`, no suffix for `default`) plus `Retry-After-<rule>` per refusing rule;
 * `false` none but `Retry-After` on a 429.
 */
export type RateLimitHeadersMode = 'draft' | 'legacy' | 'both' | 'per-rule' | false;

/** The part of `@nestjs/config`'s ConfigService the module uses (so that `@nestjs/config` stays optional). */
export interface RateLimitConfigReader {
  get(path: string): unknown;
  readonly changes$?: { subscribe(next: (event: { path: string }) => void): { unsubscribe(): void } };
}

/** Rules as they are kept in configuration (`registerAs('rateLimit', ...)`), where env vars arrive as strings. */
export interface RateLimitRulesConfig {
  /**
   * The rule every guarded route gets (named `'default'`), or a list of named rules every guarded route gets,
   * decided all-or-nothing, each overridable by `@RateLimit({ name })` and skippable by `@SkipRateLimit(name)`,
   * e.g. `[{ name: 'short', limit: 3, window: '1s' }, { name: 'long', limit: 100, window: '1m' }]`.
   * `false` or absent: only decorated routes are limited. @default undefined
   */
  defaultRule?: RateLimitPolicyOptions | readonly RateLimitNamedPolicyOptions[] | false;
  /** Named rules, applied where `@RateLimit('<name>')` or `RateLimitService` refers to them. */
  rules?: Record<string, RateLimitPolicyOptions>;
  /**
   * The mode of every rule that sets none (`'enforce'` or `'shadow'`, see `RateLimitMode`); in config
   * (`rateLimit.mode`) it wins over the module option, and `configService.set()` switches it live.
   * @default 'enforce'
   */
  mode?: RateLimitMode;
}

export interface RateLimitModuleOptions extends RateLimitRulesConfig {
  /**
   * Where limits are decided: a client the app already has, left open on shutdown (an ioredis 5/6 or iovalkey
   * `Redis` or `Cluster`; a node-redis 5/6 `createClient()`, `createCluster()` or `createSentinel()`, connected
   * before the app starts; a Valkey GLIDE `GlideClient` or `GlideClusterClient`); a `redis://` URL (a client the
   * module creates, of `clientLibrary`, with safe settings, connects at bootstrap and closes); ioredis options
   * (Sentinel included) or `{ cluster: nodes }` (the same, with ioredis or iovalkey); `'memory'`; or any
   * `RateLimitStore` (used as given: `keyPrefix` and `clock` do not apply to it). Any other object is refused at
   * start-up.
   * @default 'memory'
   */
  store?: 'memory' | string | RedisClientLike | RedisOptions | RateLimitClusterOptions | RateLimitStore;
  /**
   * The library of the client the module creates from a `redis://` URL or options (`store`); refused at start-up if
   * it is not installed. Unset, the first installed of ioredis, iovalkey and node-redis (ioredis options and
   * `{ cluster }` need ioredis or iovalkey). No effect on a client passed as `store`.
   * @default the first installed of 'ioredis', 'iovalkey', 'node-redis'
   */
  clientLibrary?: CreatableClientLibrary;
  /** Prefix of every key the store writes: `<prefix>:<rule>:<tag>:{<tracker>}` (see keys/key.builder.ts). @default 'rl' */
  keyPrefix?: string;
  /** Rate-limit headers on every guarded HTTP response. @default 'draft' */
  headers?: RateLimitHeadersMode;
  /**
   * Whether the rate-limit headers report shadow rules (`mode: 'shadow'`) too. Off, a client sees only the rules
   * in force, so a rule tried out in shadow changes nothing it can observe. @default false
   */
  shadowHeaders?: boolean;
  /**
   * Which proxies may set the client IP through `X-Forwarded-For`, as Express's `trust proxy` setting: `true`
   * (any), a hop count, or addresses / CIDR ranges / `'loopback'`, `'uniquelocal'`. Unset: the platform decides
   * (Express `app.set('trust proxy')`, Fastify `trustProxy`), which by default trusts none. `false` overrides a
   * platform that trusts proxies.
   * @default undefined
   */
  trustProxy?: boolean | number | string | readonly string[];
  /** IPv6 clients are counted per subnet of this many leading bits, since one host holds many addresses. @default 64 */
  ipv6Subnet?: number;
  /** Requests for which this returns true are not limited. @default none */
  skip?: (context: ExecutionContext) => boolean | Promise<boolean>;
  /** Requests whose `User-Agent` matches one of these are not limited by any rule (e.g. `[/googlebot/i]`). @default none */
  ignoreUserAgents?: readonly RegExp[];
  /**
   * The client identity for `key: 'ip'` and for the fallback of unresolvable keys, as throttler's `getTracker`
   * (e.g. `(req) => req.headers['x-client-id'] ?? req.ip`); a non-empty string. Overriding the guard's protected
   * `getTracker` still works. On microservices it gets the message as a request (`body`: the payload, `headers`:
   * the transport's headers), and an empty answer means "no tracker" there. @default the client IP, IPv6 per `ipv6Subnet`
   */
  getTracker?: (request: HttpRequestLike & Record<string, any>, context: ExecutionContext) => string | Promise<string>;
  /**
   * The store key of a tracker under a rule, as throttler's `generateKey`; the store still adds `keyPrefix` and
   * the rule's name, so returning `tracker` alone shares one budget across routes. A non-empty string.
   * @default `<controller path>:<Controller>.<handler>|<tracker>`, or `tracker` for a shared rule
   */
  generateKey?: (context: ExecutionContext, tracker: string, ruleName: string) => string;
  /**
   * Message of the 429 body, or a function of the refusing rule's decision (the rule the client waits longest
   * for), with its `rule` name, `limit`, `used`, `totalHits` (throttler's count: `used` plus the refused request) and `retryAfterMs`: e.g.
   * `(ctx, d) => d.used + ' of ' + d.limit + ' attempts used'`. `enforce` uses the string form only. @default 'Too Many Requests'
   */
  errorMessage?: string | ((context: ExecutionContext, detail: RateLimitErrorDetail) => string);
  /** Time source in ms since the epoch, for tests. @default the store's (Redis `TIME`; a monotonic clock in memory) */
  clock?: Clock;
  /**
   * What decides while Redis is down, slow or behind an open circuit: `'open'` admits (uncounted), `'closed'`
   * refuses, `'memory'` decides on the embedded memory store (per process). Rules may override it.
   * @default 'memory'
   */
  failurePolicy?: FailurePolicy;
  /** Longest wait for Redis on one decision, in ms; then the failure policy decides. @default 50 */
  timeoutMs?: number;
  /**
   * Redis stores: the decisions made in one turn of the event loop go to Redis as one script call (per Cluster
   * node), deciding them in order exactly as one by one; a lone decision goes out at once. `maxBatch` caps the
   * decisions of one script call. `false` sends one script call per decision (those made in one turn share one
   * socket write, as with ioredis's auto-pipelining): for a Redis shared with latency-critical commands that one long
   * script call would hold back. `true` is the default. @default { maxBatch: 64 } (128 on a GLIDE client)
   */
  coalesce?: boolean | { maxBatch?: number };
  /**
   * Redis stores: call the decision scripts as a Redis function library, loaded once per server (`FUNCTION LOAD`, a
   * library named `rrl_<sha1 of the script>`), then called with `FCALL`, where the server has functions (Redis 7+,
   * Valkey), on every client library (a GLIDE Cluster client, which shows no slot table, loads it on every primary at
   * once). A library's code is made once, when it is loaded, where an `EVALSHA` makes the script's functions and
   * tables anew on every call, and it keeps the rule definitions it has read: a decision sent alone costs Redis about
   * a third fewer instructions. Where the server refuses `FUNCTION LOAD` (Redis 6, an ACL, a renamed command),
   * scripts go as `EVALSHA`. `false`: `EVALSHA` only, nothing kept in the server's function libraries. @default true
   */
  functions?: boolean;
  /**
   * When Redis refuses the connection at start-up for a reason retrying cannot fix (WRONGPASS, NOAUTH, NOPERM, a
   * database index it does not have), start anyway and let the failure policy decide, logging the reason, instead
   * of stopping the application with it. A Redis that is only not up yet never stops the start-up.
   * @default false
   */
  startDegraded?: boolean;
  /** When to stop calling a failing Redis. @default { failureThreshold: 3, minOpenMs: 500, maxOpenMs: 30000 } */
  circuitBreaker?: CircuitBreakerOptions;
  /**
   * Refuse a request the store refused before, in-process, until its `retryAfterMs` has passed, without a
   * store call (guard only; not with the memory store, whose own refusal costs no more). `false` turns it off;
   * `maxKeys` and `maxBytes` bound it.
   * @default { maxKeys: 10000, maxBytes: 4194304 }
   */
  blockCache?: boolean | BlockCacheOptions;
  /** Prometheus metrics through prom-client when it is installed; `false` turns them off. @default prom-client's global registry */
  metrics?: false | RateLimitMetricsOptions;
  /**
   * The decision metrics through OpenTelemetry too (`ratelimit.decisions`, `ratelimit.decision.duration` in
   * seconds, ...: the Prometheus ones under semantic-convention names), and each decision as `ratelimit.*`
   * attributes on the active span. Needs `@opentelemetry/api` (refused at start-up without it). `true` is `{}`.
   * @default false
   */
  openTelemetry?: boolean | RateLimitOpenTelemetryOptions;
  /** Called after every decision (guard and service), for custom logging. @default none */
  onDecision?: (event: RateLimitDecisionEvent) => void;
  /** Called after every refusal. @default none */
  onRejected?: (event: RateLimitDecisionEvent) => void;
  /** Record refusals in a capped Redis Stream (Redis stores only). @default false */
  audit?: boolean | RejectionAuditOptions;
  /**
   * Read `defaultRule` and `rules` from this ConfigService at `configPath` too (they win over the ones above),
   * and again whenever `set()` changes a path under it, or every `refreshIntervalMs`.
   * @default undefined
   */
  config?: RateLimitConfigReader;
  /** Where under `config` the rules live. @default 'rateLimit' */
  configPath?: string;
  /** Re-read the rules from `config` this often, in ms; 0 = only on `changes$`. @default 0 */
  refreshIntervalMs?: number;
}

/** A Redis Cluster the module connects to (and closes). */
export interface RateLimitClusterOptions {
  /** Seed nodes, as ioredis's `Cluster` takes them. */
  cluster: ClusterNode[];
  /** ioredis Cluster options; the module's safety settings (no offline queue, no resend, timeouts) apply on top. */
  options?: ClusterOptions;
}

/** What `onDecision` / `onRejected` receive. */
export interface RateLimitDecisionEvent {
  /** The tracker key and rule name of each rule decided. */
  readonly entries: readonly { readonly key: string; readonly rule: string }[];
  readonly result: MultiDecision;
  /** Time to decide, store round trip included, in ms. */
  readonly durationMs: number;
  /** True when the local block cache answered without the store. */
  readonly fromBlockCache: boolean;
  /**
   * True when only shadow rules refused (their decisions carry `shadow: true`): the request was admitted
   * (`result.allowed`), and `onRejected` reports what enforcing them would have refused. Absent otherwise.
   */
  readonly shadow?: true;
}

/** Module-level switches that shape the module itself rather than its options. */
export interface RateLimitModuleExtras {
  /**
   * Register the module globally, so that `RateLimitService` can be injected and `@UseGuards(RateLimitGuard)` used in
   * any module without importing `RateLimitModule` there (as `@nestjs/throttler` does). `false` keeps it to the
   * modules that import it. @default true
   */
  isGlobal?: boolean;
  /** Register `RateLimitGuard` as `APP_GUARD`: every route is limited by the default rule. @default false */
  globalGuard?: boolean;
  /**
   * Register `RateLimitInterceptor` as `APP_INTERCEPTOR`, for every handler of the app. It gives 429s thrown by
   * business code (`enforce`, or `RateLimitExceededException` after a `peek`) their `Retry-After` and rate-limit
   * headers, and holds the leases of concurrency rules on calls without an HTTP response (WebSocket messages).
   * Off by default because Nest runs a chain of Observables for every handler that has any interceptor: one that
   * only passes on cost 7 µs per request on Fastify and 12 µs on Express (the HTTP bench), every route, limited
   * or not. `@UseInterceptors(RateLimitInterceptor)` on the controllers and gateways that need it does the same
   * for those alone. @default false
   */
  globalInterceptor?: boolean;
}

/** Bounds of the local block cache; past either one, the oldest refusals are dropped first. */
export interface BlockCacheOptions {
  /** Most refusals kept. @default 10000 */
  maxKeys?: number;
  /**
   * Most heap the cached refusals may take, in bytes, as estimated: 2 bytes per character of the request's
   * signature (rule names, keys, costs; a key over 128 characters counts as its 44-character digest) plus
   * 240 bytes per refusal and 160 per rule in it (about 8,000 one-rule refusals). @default 4194304 (4 MiB)
   */
  maxBytes?: number;
}
