import type { HttpRequestLike } from '../interfaces/http-request.interface.js';

/**
 * Whether the request's `User-Agent` matches one of `patterns` (`ignoreUserAgents`). `search` rather than
 * `test`: a pattern with the `g` or `y` flag keeps its `lastIndex` between calls under `test`, and would match
 * every other request only.
 */
export function userAgentMatches(request: HttpRequestLike, patterns: readonly RegExp[]): boolean {
  const header = request.headers?.['user-agent'];
  const userAgent = Array.isArray(header) ? header[0] : header;
  if (!userAgent) return false;
  return patterns.some((pattern) => userAgent.search(pattern) !== -1);
}
