import { Logger } from '@nestjs/common';
import type { HttpRequestLike } from '../interfaces/http-request.interface.js';

const logger = new Logger('RateLimit');
let warned = false;
/** Express apps found trusting a proxy: asked once, not on every request. */
const trustingApps = new WeakSet<object>();

/** What tells whether the platform trusts proxies: Express's app settings, Fastify's `ips` (only when it trusts). */
interface PlatformRequest extends HttpRequestLike {
  app?: { get?(setting: string): unknown };
  ips?: unknown;
}

/**
 * Warns once per process when a request carries `X-Forwarded-For` but neither the module (`trustProxy`) nor
 * the platform trusts a proxy: behind a load balancer, every client then has the balancer's address and
 * shares one bucket. Called only while the module's `trustProxy` is unset.
 */
export function warnIfForwardedForIgnored(request: PlatformRequest): void {
  if (warned || request.headers?.['x-forwarded-for'] === undefined) return;
  const app = request.app;
  const express = typeof app?.get === 'function';
  if (express && trustingApps.has(app!)) return;
  // Express always has `ips` (empty when untrusting); Fastify defines it only when it trusts a proxy.
  const platformTrusts = express ? Boolean(app!.get!('trust proxy')) : request.ips !== undefined;
  if (platformTrusts) {
    // Express's settings lookup is not free, and this runs for every request behind a proxy.
    if (express) trustingApps.add(app!);
    return;
  }
  warned = true;
  const platformSetting = express ? "Express's app.set('trust proxy', ...)" : 'new FastifyAdapter({ trustProxy: ... })';
  logger.warn(
    'A request carries X-Forwarded-For but no proxy is trusted: if a proxy or load balancer is in front, every client ' +
      `behind it shares its address and one rate-limit bucket. Set the rate-limit module's trustProxy option (e.g. trustProxy: 1 ` +
      `for one proxy hop) or ${platformSetting}; trustProxy: false keeps the socket address and silences this warning.`,
  );
}

/** Lets the next request warn again, as in a new process (for tests). */
export function resetForwardedForWarning(): void {
  warned = false;
}
