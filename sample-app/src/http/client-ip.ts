/** What the sample reads from an Express request. */
export interface ClientRequest {
  ip?: string;
  socket?: { remoteAddress?: string };
}

/**
 * The client's address for the limits business code keeps (failed logins per IP). Express's `req.ip` honours its
 * own `trust proxy` setting, which is off here, so X-Forwarded-For cannot be forged to get a fresh budget.
 * IPv4-mapped IPv6 (`::ffff:1.2.3.4`) is the same client as `1.2.3.4`.
 */
export function clientIp(request: ClientRequest): string {
  const ip = request.ip ?? request.socket?.remoteAddress ?? 'unknown';
  return ip.replace(/^::ffff:(\d+\.\d+\.\d+\.\d+)$/i, '$1');
}
