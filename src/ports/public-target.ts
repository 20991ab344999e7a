import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { lookup as dnsLookupAll } from 'node:dns/promises';
import { BlockList, isIP, type LookupFunction } from 'node:net';

/*
 * The guard on outbound connections to addresses a tenant chose (webhook targets, its own LLM
 * endpoint): in production mode they must not reach the server's own network.
 */

// Loopback, private, link-local, carrier-grade NAT, multicast and reserved ranges. IPv4-mapped
// IPv6 addresses (::ffff:a.b.c.d) are matched against the IPv4 rules by BlockList itself.
const blocked = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  blocked.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
  ['64:ff9b::', 96],
] as const) {
  blocked.addSubnet(net, prefix, 'ipv6');
}

export function isPrivateAddress(address: string): boolean {
  const family = isIP(address);
  return family !== 0 && blocked.check(address, family === 6 ? 'ipv6' : 'ipv4');
}

export class PrivateTargetError extends Error {}

export const hostOf = (url: URL) => url.hostname.replace(/^\[(.*)\]$/, '$1');

/** Every address `url`'s host resolves to; throws PrivateTargetError if any is private. */
export async function assertPublicTarget(url: URL): Promise<void> {
  const host = hostOf(url);
  const addresses = isIP(host) ? [host] : (await dnsLookupAll(host, { all: true })).map((a) => a.address);
  const bad = addresses.find(isPrivateAddress);
  if (bad) throw new PrivateTargetError(`${host} resolves to the private or loopback address ${bad}`);
}

/**
 * DNS lookup for the delivery socket that refuses private addresses, so the check holds for
 * the address actually connected to (a name cannot resolve to a public address at
 * configuration time and a private one at delivery time).
 */
export const guardedLookup: LookupFunction = (hostname, options, callback) => {
  dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
    if (err) return callback(err, '', 0);
    const list = addresses as unknown as LookupAddress[];
    const bad = list.find((a) => isPrivateAddress(a.address));
    if (bad) return callback(new PrivateTargetError(`${hostname} resolves to the private or loopback address ${bad.address}`), '', 0);
    if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, list);
    return callback(null, list[0]!.address, list[0]!.family);
  });
};
