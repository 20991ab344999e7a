import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { lookup as dnsLookupAll } from 'node:dns/promises';
import { BlockList, connect, isIP, type LookupFunction, type Socket } from 'node:net';
import type { Config } from '../core/config.ts';

/*
 * The one rule for addresses a tenant chose (webhook targets, LLM endpoints, connector sites and
 * their redirects, buckets, databases), applied right before each connection to the address
 * actually connected to (docs/deployment.md, "Production mode"): in production mode only public
 * addresses, besides the networks the operator allows; for an address anyone may name without a
 * key, the same in every mode.
 */

/** What a tenant-chosen target may be: `targetRule(config)`. */
export interface TargetRule {
  publicOnly: boolean;
  /** The operator's own networks, allowed in production mode too (ORGMEM_ALLOW_PRIVATE_NETWORKS). */
  allowed: BlockList;
}

/** A target refused by the rule: the host, the address it resolved to and why, a sentence for the tenant. */
export class PrivateTargetError extends Error {}

// IPv4 that is not the internet: this network, private, carrier-grade NAT, loopback, link-local
// (cloud metadata), IETF protocol assignments, documentation, the 6to4 relay, benchmarking,
// multicast, reserved and broadcast. IPv4-mapped IPv6 addresses (::ffff:a.b.c.d) are checked
// against these by BlockList itself.
const notPublic4 = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  notPublic4.addSubnet(net, prefix, 'ipv4');
}

const mapped = new BlockList();
mapped.addSubnet('::ffff:0:0', 96, 'ipv6');

// IPv6 is public only inside global unicast (2000::/3), which leaves out loopback, unspecified,
// IPv4-compatible (::a.b.c.d), NAT64 (64:ff9b::/96 and /48), discard, unique local (fc00::/7),
// link-local (fe80::/10) and multicast; inside it, the ranges that carry an IPv4 address or are
// not routed: IETF assignments with Teredo (2001::/23), documentation and 6to4 (2002::/16).
const global6 = new BlockList();
global6.addSubnet('2000::', 3, 'ipv6');
const notPublic6 = new BlockList();
for (const [net, prefix] of [
  ['2001::', 23],
  ['2001:db8::', 32],
  ['2002::', 16],
  ['3fff::', 20],
] as const) {
  notPublic6.addSubnet(net, prefix, 'ipv6');
}

/** An address on the internet, neither the server's own networks nor one that carries such an address. */
export function isPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return !notPublic4.check(address, 'ipv4');
  if (family !== 6) return false;
  if (mapped.check(address, 'ipv6')) return !notPublic4.check(address, 'ipv6');
  return global6.check(address, 'ipv6') && !notPublic6.check(address, 'ipv6');
}

const rules = new WeakMap<Config['targets'], { tenant: TargetRule; anonymous: TargetRule }>();

/** The rules of this configuration (one object each per configuration, so clients can be kept per rule). */
function rulesOf(targets: Config['targets']): { tenant: TargetRule; anonymous: TargetRule } {
  let known = rules.get(targets);
  if (!known) {
    const allowed = new BlockList();
    for (const network of targets.allowedNetworks) {
      const [address = '', prefix] = network.split('/');
      const type = isIP(address) === 6 ? 'ipv6' : 'ipv4';
      if (prefix === undefined) allowed.addAddress(address, type);
      else allowed.addSubnet(address, Number(prefix), type);
    }
    rules.set(targets, (known = { tenant: { publicOnly: targets.publicOnly, allowed }, anonymous: { publicOnly: true, allowed } }));
  }
  return known;
}

/** The rule of a tenant's targets: public only in production mode, besides the operator's networks. */
export const targetRule = (config: Pick<Config, 'targets'>): TargetRule => rulesOf(config.targets).tenant;

/**
 * The rule of an address anyone may name without a key (a client ID metadata document): public
 * only in every mode, besides the operator's networks, whatever ORGMEM_WEBHOOK_ALLOW_PRIVATE says
 * (docs/deployment.md, "Production mode").
 */
export const anonymousRule = (config: Pick<Config, 'targets'>): TargetRule => rulesOf(config.targets).anonymous;

/** Throws PrivateTargetError when the rule refuses `address`, which `host` resolved to. */
export function checkAddress(rule: TargetRule, host: string, address: string): void {
  if (!rule.publicOnly || isPublicAddress(address) || rule.allowed.check(address, isIP(address) === 6 ? 'ipv6' : 'ipv4')) return;
  const what = host === address ? address : `${host} (which resolves to ${address})`;
  throw new PrivateTargetError(`${what} is a private, loopback or other internal address, which this server does not connect to`);
}

/** A URL's host as an address or name: without IPv6's brackets. */
export const hostOf = (url: URL) => url.hostname.replace(/^\[(.*)\]$/, '$1');

/** Every address `host` resolves to, each checked; an address is its own answer. */
export async function resolveTarget(rule: TargetRule, host: string): Promise<LookupAddress[]> {
  const addresses = isIP(host) ? [{ address: host, family: isIP(host) }] : await dnsLookupAll(host, { all: true });
  for (const a of addresses) checkAddress(rule, host, a.address);
  return addresses;
}

/**
 * The DNS lookup of every socket to a tenant-chosen target: the addresses it answers are the ones
 * connected to, checked here, so a name cannot resolve to a public address when checked and a
 * private one when connected (no second lookup). An address written in the URL is not looked up
 * by Node: `checkAddress` it before connecting.
 */
export function checkedLookup(rule: TargetRule): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, '', 0);
      const list = addresses as unknown as LookupAddress[];
      try {
        for (const a of list) checkAddress(rule, hostname, a.address);
      } catch (refused) {
        return callback(refused as Error, '', 0);
      }
      if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, list);
      return callback(null, list[0]!.address, list[0]!.family);
    });
  };
}

/** A TCP connection to the first checked address of `host` (a database: the socket its driver speaks over). */
export async function connectChecked(rule: TargetRule, host: string, port: number, timeoutMs: number): Promise<Socket> {
  const [target] = await resolveTarget(rule, host);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: target!.address, port, timeout: timeoutMs });
    const fail = (err: Error) => {
      socket.destroy();
      reject(err);
    };
    socket.once('timeout', () => fail(new Error(`${host}:${port} did not answer within ${timeoutMs / 1000} s`)));
    socket.once('error', fail);
    socket.once('connect', () => {
      socket.setTimeout(0);
      socket.removeListener('error', fail);
      resolve(socket);
    });
  });
}

/**
 * Checked when a target is saved, so a refused one is refused with its reason then; every use
 * checks again when it connects (a config saved before production mode, or before a DNS change).
 */
export async function checkTargetUrl(rule: TargetRule, url: URL): Promise<void> {
  if (rule.publicOnly) await resolveTarget(rule, hostOf(url));
}
