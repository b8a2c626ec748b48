import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * The client's address (decisions.md §7): the socket's, unless TRUST_PROXY says how many proxies in
 * front append X-Forwarded-For. Each trusted proxy appended the address it saw; the client is the one
 * the outermost trusted proxy saw. Fewer entries than trusted proxies means the request did not come
 * through them all, so no entry is the outermost proxy's: the socket address stands, never the
 * left-most entry, which the client writes itself. A forwarded entry that is not an IP address
 * (node:net isIP) is not believed either (docs/faults.md "Client addresses").
 */
/** Where the request came from, as the HTTP server (or a test) says. */
export type RequestOrigin = { req?: { socket: { remoteAddress?: string } }; clientAddress?: string };

export function clientIpOf(request: Request, server: RequestOrigin, trustProxy: number): string {
  const socket = server.req?.socket.remoteAddress ?? server.clientAddress ?? 'unknown';
  if (trustProxy === 0) return socket;
  const hops = (request.headers.get('x-forwarded-for') ?? '')
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean);
  const forwarded = hops[hops.length - trustProxy];
  return forwarded !== undefined && isIP(forwarded) !== 0 ? forwarded : socket;
}

/**
 * What a per-address limit counts (docs/security.md): an IPv4 address as it is (an IPv4-mapped IPv6
 * one as its IPv4), an IPv6 address by its /64, the smallest block a provider hands one subscriber,
 * so a client cannot take a fresh limit from each of its 2^64 addresses. ipaddr.js parses every
 * IPv6 spelling (compressed, zone ids, an IPv4 tail), which a string split would get wrong.
 */
export function limitAddress(ip: string): string {
  let counted = limitAddresses.get(ip);
  if (counted === undefined) {
    // Bounded: a flood of fresh addresses empties it rather than growing it.
    if (limitAddresses.size >= LIMIT_ADDRESSES_KEPT) limitAddresses.clear();
    limitAddresses.set(ip, (counted = parseLimitAddress(ip)));
  }
  return counted;
}

// Every request's context asks, and ipaddr.js parses anew each time (up to 90 µs for an address it
// refuses, such as a test's 'unknown'; BENCHMARKS.md "Writes as fast as reads"): a client's
// connections ask for the same few addresses again and again.
const LIMIT_ADDRESSES_KEPT = 10_000;
const limitAddresses = new Map<string, string>();

function parseLimitAddress(ip: string): string {
  if (!ipaddr.isValid(ip)) return ip; // 'unknown' (no socket): counted as it is
  const address = ipaddr.process(ip);
  if (address.kind() === 'ipv4') return address.toString();
  return `${address.toNormalizedString().split(':').slice(0, 4).join(':')}::/64`;
}
