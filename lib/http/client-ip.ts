import { isIPv4, isIPv6 } from 'node:net';
import proxyAddr from 'proxy-addr';
import type { IncomingMessage } from 'node:http';
import type { HttpRequestLike } from '../interfaces/http-request.interface.js';

/**
 * The client's address. With `trust` (the module's `trustProxy`) it is computed here from the socket and
 * `X-Forwarded-For`, believing only trusted hops; without it, it is what the platform computed under its own
 * trust setting (Express `trust proxy`, Fastify `trustProxy`). A raw header is never taken on its own word.
 */
export function clientIp(request: HttpRequestLike, trust?: (address: string, hop: number) => boolean): string | undefined {
  if (trust) {
    const raw = (request.raw ?? request) as IncomingMessage;
    // A unix socket has no remote address: the proxy in front of it is still the trusted hop that forwarded it.
    if (raw.socket) return proxyAddr(raw, trust);
  }
  return request.ip ?? request.socket?.remoteAddress ?? request.raw?.socket?.remoteAddress;
}

/**
 * One tracker per IPv4 address and per IPv6 subnet: a single IPv6 host usually holds a whole /64, and could
 * otherwise rotate through addresses to get a fresh budget each time. IPv4-mapped IPv6 (::ffff:0:0/96, in
 * any spelling) is plain IPv4; under a /128 an address is written one way (RFC 5952) whatever form it came in.
 */
export function groupIp(ip: string, ipv6Subnet: number): string {
  const bare = ip.replace(/%.*$/, '');
  if (isIPv4(bare) || !isIPv6(bare)) return bare;
  const groups = expandIPv6(bare);
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
    return `${groups[6] >> 8}.${groups[6] & 0xff}.${groups[7] >> 8}.${groups[7] & 0xff}`;
  }
  if (ipv6Subnet >= 128) return compressIPv6(groups);
  const out: string[] = [];
  for (let i = 0; i < 8; i++) {
    const bits = Math.max(0, Math.min(16, ipv6Subnet - i * 16));
    const mask = bits === 0 ? 0 : (0xffff << (16 - bits)) & 0xffff;
    out.push((groups[i] & mask).toString(16));
  }
  return `${out.join(':')}/${ipv6Subnet}`;
}

/** RFC 5952 text: lower case, no leading zeros, the longest run (first of equals) of two or more zero groups as `::`. */
function compressIPv6(groups: readonly number[]): string {
  let start = -1;
  let length = 1;
  for (let i = 0; i < 8; i++) {
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > length) [start, length] = [i, j - i];
    i = j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (start < 0) return hex.join(':');
  return `${hex.slice(0, start).join(':')}::${hex.slice(start + length).join(':')}`;
}

function expandIPv6(ip: string): number[] {
  let text = ip;
  // A trailing dotted quad (::1.2.3.4) is the last 32 bits.
  const quad = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (quad) {
    const [a, b, c, d] = quad.slice(1).map(Number);
    text = text.slice(0, quad.index) + `${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::');
  const left = head ? head.split(':') : [];
  const right = tail === undefined ? [] : tail ? tail.split(':') : [];
  const fill = tail === undefined ? [] : new Array<string>(8 - left.length - right.length).fill('0');
  return [...left, ...fill, ...right].map((g) => parseInt(g, 16));
}
