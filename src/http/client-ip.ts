import { isIP } from 'node:net';

/**
 * The client's address (decisions.md §7): the socket's, unless TRUST_PROXY says how many proxies in
 * front append X-Forwarded-For. Each trusted proxy appended the address it saw; the client is the one
 * the outermost trusted proxy saw. A forwarded entry that is not an IP address (node:net isIP) is
 * not believed: the socket address stands (docs/faults.md "Client addresses").
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
  const forwarded = hops[hops.length - trustProxy] ?? hops[0];
  return forwarded !== undefined && isIP(forwarded) !== 0 ? forwarded : socket;
}
