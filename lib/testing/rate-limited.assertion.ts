import { AssertionError } from 'node:assert';
import type { RateLimitHeadersMode } from '../interfaces/rate-limit-options.interface.js';

/**
 * An HTTP response as test clients hand it over: supertest's (`status`, `headers`, parsed `body`) or Fastify's
 * `inject()` (light-my-request: `statusCode`, `headers`, `body` as text). Header names are lower case in both.
 */
export interface TestResponse {
  status?: number;
  statusCode?: number;
  headers: Record<string, string | string[] | number | undefined>;
  body?: unknown;
}

/** What `expectRateLimited` checks beyond the shape of a 429. */
export interface RateLimitedExpectation {
  /** The app's `headers` option: which rate-limit fields the 429 must carry. @default 'draft' */
  headers?: RateLimitHeadersMode;
  /** A rule the refusal must report (in the RateLimit fields, or the per-rule headers' names). */
  rule?: string;
  /** The exact wait, in seconds (Retry-After and the body's `retryAfter`). */
  retryAfter?: number;
  /** The exact message of the body. */
  message?: string;
  /** Whether the body must be the module's `{ statusCode: 429, message, retryAfter }`; false for a body of your own. @default true */
  body?: boolean;
}

/** One member of the RateLimit field: a rule's name, what it has left (`r`) and seconds until it is whole (`t`). */
export interface RateLimitField {
  rule: string;
  remaining: number;
  resetSeconds: number;
}

/** What a 429 said, once checked. */
export interface RateLimitedResponse {
  /** Retry-After, in seconds. */
  retryAfter: number;
  /** The members of the RateLimit field (draft headers), in order; empty in the other modes. */
  rules: RateLimitField[];
  /** The body, parsed. */
  body: unknown;
}

const MEMBER = /^"([^"]+)";r=(\d+);t=(\d+)$/;
const POLICY_MEMBER = /^"([^"]+)";q=(\d+);w=(\d+)$/;

/**
 * Asserts that `res` is the module's refusal: status 429, a Retry-After of whole seconds, the rate-limit fields of
 * the `headers` mode (draft: RateLimit-Policy and RateLimit, one member per rule, the same rules in both), and the
 * body `{ statusCode: 429, message, retryAfter }` whose `retryAfter` is the Retry-After. Throws an AssertionError
 * saying what differs; returns what the response said, for further checks.
 */
export function expectRateLimited(res: TestResponse, expected: RateLimitedExpectation = {}): RateLimitedResponse {
  const status = res.status ?? res.statusCode;
  const body = parsedBody(res.body);
  check(status === 429, `expected a 429 refusal, got ${String(status)}${body === undefined ? '' : `: ${JSON.stringify(body).slice(0, 200)}`}`);
  const retryText = header(res, 'retry-after');
  // The module's body without the header: a refusal by business code, in an app where RateLimitInterceptor does not run.
  const hint = retryText === undefined && typeof (body as { retryAfter?: unknown } | undefined)?.retryAfter === 'number' ? ' (a 429 of RateLimitService.enforce gets its headers from RateLimitInterceptor: globalInterceptor: true)' : '';
  check(retryText !== undefined && /^\d+$/.test(retryText), `expected a Retry-After of whole seconds on the 429, got ${JSON.stringify(retryText)}${hint}`);
  const retryAfter = Number(retryText);
  if (expected.retryAfter !== undefined) check(retryAfter === expected.retryAfter, `expected Retry-After: ${expected.retryAfter}, got ${retryAfter}`);
  const rules = checkFields(res, expected.headers ?? 'draft', expected.rule);
  if (expected.body ?? true) checkBody(body, retryAfter, expected.message);
  return { retryAfter, rules, body };
}

function checkFields(res: TestResponse, mode: RateLimitHeadersMode, rule: string | undefined): RateLimitField[] {
  if (mode === false) {
    const shown = Object.keys(res.headers).filter((name) => /^(ratelimit|ratelimit-policy|x-ratelimit-.+)$/.test(name));
    check(shown.length === 0, `expected no rate-limit headers (headers: false), got ${shown.join(', ')}`);
    return [];
  }
  let rules: RateLimitField[] = [];
  if (mode === 'draft' || mode === 'both') {
    const policy = members(res, 'ratelimit-policy', POLICY_MEMBER, '"<rule>";q=<limit>;w=<seconds>');
    rules = members(res, 'ratelimit', MEMBER, '"<rule>";r=<remaining>;t=<seconds>').map(([name, r, t]) => ({ rule: name, remaining: Number(r), resetSeconds: Number(t) }));
    const named = (list: { join(s: string): string }) => list.join(', ');
    check(
      named(policy.map(([name]) => name)) === named(rules.map((r) => r.rule)),
      `expected RateLimit-Policy and RateLimit to name the same rules, got ${header(res, 'ratelimit-policy')} and ${header(res, 'ratelimit')}`,
    );
    if (rule !== undefined) check(rules.some((r) => r.rule === rule), `expected the rule "${rule}" in RateLimit, got ${header(res, 'ratelimit')}`);
  }
  if (mode === 'legacy' || mode === 'both') {
    for (const name of ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset']) {
      check(/^\d+$/.test(header(res, name) ?? ''), `expected ${name} of a whole number, got ${JSON.stringify(header(res, name))}`);
    }
  }
  if (mode === 'per-rule') {
    const limits = Object.keys(res.headers).filter((name) => name.startsWith('x-ratelimit-limit'));
    check(limits.length > 0, 'expected X-RateLimit-Limit[-<rule>] headers (headers: per-rule), got none');
    if (rule !== undefined) {
      const name = rule === 'default' ? 'x-ratelimit-limit' : `x-ratelimit-limit-${rule.toLowerCase()}`;
      check(limits.includes(name), `expected the header ${name} for the rule "${rule}", got ${limits.join(', ')}`);
    }
  }
  return rules;
}

function checkBody(body: unknown, retryAfter: number, message: string | undefined): void {
  check(body !== null && typeof body === 'object', `expected a JSON body { statusCode: 429, message, retryAfter }, got ${JSON.stringify(body)}`);
  const { statusCode, message: said, retryAfter: wait } = body as Record<string, unknown>;
  check(statusCode === 429, `expected the body's statusCode to be 429, got ${JSON.stringify(statusCode)}`);
  check(typeof said === 'string' && said !== '', `expected the body's message to be a string, got ${JSON.stringify(said)}`);
  if (message !== undefined) check(said === message, `expected the body's message ${JSON.stringify(message)}, got ${JSON.stringify(said)}`);
  check(wait === retryAfter, `expected the body's retryAfter to equal Retry-After (${retryAfter}), got ${JSON.stringify(wait)}`);
}

/** A list field's members, each matched by `pattern`; the field must be there and every member well formed. */
function members(res: TestResponse, name: string, pattern: RegExp, form: string): string[][] {
  const value = header(res, name);
  check(value !== undefined && value !== '', `expected a ${name} header on the 429, got none`);
  return value.split(/,\s*/).map((member) => {
    const match = pattern.exec(member);
    check(match !== null, `expected each member of ${name} to read ${form}, got ${JSON.stringify(member)}`);
    return match.slice(1);
  });
}

function header(res: TestResponse, name: string): string | undefined {
  const value = res.headers[name];
  return Array.isArray(value) ? value.join(', ') : value === undefined ? undefined : String(value);
}

/** supertest parses JSON bodies; Fastify's inject() leaves them as text. */
function parsedBody(body: unknown): unknown {
  if (typeof body !== 'string') return body;
  try {
    return JSON.parse(body) as unknown;
  } catch {
    return body;
  }
}

function check(condition: boolean, message: string): asserts condition {
  if (!condition) throw new AssertionError({ message });
}
