// Load generation for the HTTP bench: autocannon's programmatic API, with our own latency record (autocannon's
// histogram has 1 ms resolution) and an optional X-Forwarded-For spread over a pool of client IPs.
import autocannon from 'autocannon';

/** The i-th address of the pool: 10.0.0.0, 10.0.0.1, ... (distinct for i < 2^24). */
export const poolIp = (i) => `10.${(i >>> 16) & 255}.${(i >>> 8) & 255}.${i & 255}`;

/**
 * autocannon `setupClient` giving each connection its own slice of the pool (connection c gets addresses c,
 * c + n, c + 2n, ...), all built up front, so no request is rebuilt while the load runs. Every request of a
 * connection carries the next address of its slice; together the connections cycle through all `poolSize`.
 */
function spreadOverPool(poolSize, connections, path) {
  const slices = Array.from({ length: connections }, () => []);
  for (let i = 0; i < poolSize; i++) slices[i % connections].push(poolIp(i));
  let next = 0;
  return (client) => {
    const slice = slices[next++ % connections];
    client.setRequests(slice.map((ip) => ({ method: 'GET', path, headers: { 'x-forwarded-for': ip } })));
  };
}

/** Latencies in ms, in a growable Float64Array; nearest-rank percentiles. */
class LatencyRecorder {
  values = new Float64Array(1 << 18);
  count = 0;

  add(ms) {
    if (this.count === this.values.length) {
      const grown = new Float64Array(this.values.length * 2);
      grown.set(this.values);
      this.values = grown;
    }
    this.values[this.count++] = ms;
  }

  percentiles(...ps) {
    const sorted = this.values.subarray(0, this.count).sort();
    return ps.map((p) => (this.count === 0 ? NaN : sorted[Math.max(0, Math.ceil(p * this.count) - 1)]));
  }
}

/**
 * One autocannon run against http://127.0.0.1:<port><path> for `seconds`, `connections` connections,
 * pipelining 1. `ipPool` > 0 spreads X-Forwarded-For over that many addresses. Resolves to
 * { requests, perSecond, p50, p99, non2xx, errors, timeouts, statusCodes }.
 */
export async function runLoad({ port, path = '/ping', seconds, connections, ipPool = 0 }) {
  const latencies = new LatencyRecorder();
  const instance = autocannon({
    url: `http://127.0.0.1:${port}${path}`,
    connections,
    pipelining: 1,
    duration: seconds,
    ...(ipPool > 0 ? { setupClient: spreadOverPool(ipPool, connections, path) } : {}),
  });
  instance.on('response', (_client, _statusCode, _bytes, responseTimeMs) => latencies.add(responseTimeMs));
  const result = await instance;
  const elapsedS = (result.finish.getTime() - result.start.getTime()) / 1000;
  const [p50, p99] = latencies.percentiles(0.5, 0.99);
  return {
    requests: latencies.count,
    perSecond: latencies.count / elapsedS,
    p50,
    p99,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    statusCodes: Object.fromEntries(Object.entries(result.statusCodeStats ?? {}).map(([code, { count }]) => [code, count])),
  };
}
