import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP } from 'node:net';
import type { TargetPolicy } from '../deps.js';

/**
 * The SSRF guard of docs/decisions.md §13: where a webhook may be sent. Checked when an endpoint
 * is saved and again at every connection (the address we connect to is the one we checked, so a
 * DNS answer that changes in between cannot point us inside). Node's own BlockList holds the ranges.
 */
const BLOCKED = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8], // "this network"
  ['10.0.0.0', 8], ['172.16.0.0', 12], ['192.168.0.0', 16], // private
  ['100.64.0.0', 10], // CGNAT
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local (cloud metadata)
  ['192.0.0.0', 24], ['192.0.2.0', 24], ['198.18.0.0', 15], ['198.51.100.0', 24], ['203.0.113.0', 24], // special, documentation, benchmarking
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, and 255.255.255.255
] as const) BLOCKED.addSubnet(net, prefix, 'ipv4');
// IPv4-mapped addresses (::ffff:a.b.c.d) are judged by their IPv4 address in isBlockedAddress: a
// ::ffff:0:0/96 rule here would make BlockList refuse every IPv4 address.
for (const [net, prefix] of [
  ['::', 96], // unspecified, loopback, and IPv4-compatible (::127.0.0.1, deprecated: RFC 4291)
  ['64:ff9b::', 96], ['64:ff9b:1::', 48], // NAT64 (reaches IPv4 space)
  ['100::', 64], // discard
  ['2001::', 23], // IETF protocol assignments (Teredo, ORCHID, ...)
  ['2001:db8::', 32], // documentation
  ['2002::', 16], // 6to4 (embeds IPv4)
  ['fc00::', 7], // unique local (private)
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated)
  ['ff00::', 8], // multicast
] as const) BLOCKED.addSubnet(net, prefix, 'ipv6');

const MAPPED = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i;

/** True for an address in a range webhooks never reach (loopback, private, link-local, CGNAT, multicast, reserved). */
export function isBlockedAddress(address: string): boolean {
  const bare = address.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  const mapped = MAPPED.exec(bare);
  if (mapped) return BLOCKED.check(mapped[1]!, 'ipv4');
  const family = isIP(bare);
  if (family === 0) return true;
  if (family === 6 && /^::ffff:/i.test(bare)) {
    // ::ffff:7f00:1 is 127.0.0.1 written in hex
    const [hi, lo] = bare.slice(7).split(':').map((h) => parseInt(h, 16));
    if (hi !== undefined && lo !== undefined) return BLOCKED.check(`${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`, 'ipv4');
  }
  return BLOCKED.check(bare, family === 4 ? 'ipv4' : 'ipv6');
}

/** What is wrong with a webhook URL on its face (scheme, credentials), or null. */
export function urlProblem(raw: string, policy: TargetPolicy): string | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'Must be an absolute URL';
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && !policy.production)) {
    return policy.production ? 'Must be an https URL' : 'Must be an http or https URL';
  }
  if (url.username || url.password) return 'Must not contain credentials';
  if (url.hash) return 'Must not contain a fragment';
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (!policy.allowPrivate && isIP(host) && isBlockedAddress(host)) return 'Must not point to a private, loopback, link-local or reserved address';
  return null;
}

const resolveAll = (host: string) =>
  new Promise<LookupAddress[]>((resolve, reject) => dnsLookup(host, { all: true, verbatim: true }, (err, addresses) => (err ? reject(err) : resolve(addresses))));

/** Save time: the URL's name must resolve, and only to addresses webhooks may reach. */
export async function targetProblem(raw: string, policy: TargetPolicy): Promise<string | null> {
  const problem = urlProblem(raw, policy);
  if (problem || policy.allowPrivate) return problem;
  const host = new URL(raw).hostname.replace(/^\[|\]$/g, '');
  if (isIP(host)) return null;
  try {
    const addresses = await resolveAll(host);
    if (addresses.length === 0 || addresses.some((a) => isBlockedAddress(a.address))) {
      return 'Must not point to a private, loopback, link-local or reserved address';
    }
  } catch {
    return 'Must be a host name that resolves';
  }
  return null;
}

export class BlockedTargetError extends Error {
  code = 'EBLOCKEDTARGET';
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for node:http(s): resolves, refuses blocked addresses, and hands the socket only
 * checked ones, so the connection goes to the address that was judged (no rebinding in between).
 */
export function guardedLookup(policy: TargetPolicy) {
  return (hostname: string, options: { all?: boolean }, callback: LookupCallback): void => {
    resolveAll(hostname).then(
      (addresses) => {
        const allowed = policy.allowPrivate ? addresses : addresses.filter((a) => !isBlockedAddress(a.address));
        if (allowed.length === 0 || (!policy.allowPrivate && allowed.length !== addresses.length)) {
          callback(new BlockedTargetError(`${hostname} resolves to an address webhooks may not reach`), '', 0);
        } else if (options.all) callback(null, allowed);
        else callback(null, allowed[0]!.address, allowed[0]!.family);
      },
      (err: NodeJS.ErrnoException) => callback(err, '', 0),
    );
  };
}
