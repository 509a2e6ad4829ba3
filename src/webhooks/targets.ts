import { lookup, Resolver } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';

/**
 * Where a webhook may point (CONTRACT §9): `http://` or `https://` URLs whose host is, and resolves only
 * to, public addresses — never loopback, private, link-local, shared (CGNAT), multicast, documentation or
 * otherwise reserved ranges — unless the host is listed in WEBHOOK_ALLOWED_HOSTS. Checked when a webhook
 * is created or its URL changed, and again before every attempt, which then connects to the very address
 * checked here (delivery.ts), so a name that re-resolves elsewhere (DNS rebinding) cannot reach a
 * private address.
 */
const NON_PUBLIC = new BlockList();
for (const [net, bits] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.88.99.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['198.51.100.0', 24],
  ['203.0.113.0', 24], ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const)
  NON_PUBLIC.addSubnet(net, bits, 'ipv4');
for (const [net, bits] of [
  // ::/96: the unspecified and loopback addresses and the deprecated IPv4-compatible ones (::a.b.c.d, ::7f00:1);
  // ::ffff:0:0:0/96, IPv4-translated (::ffff:0:a.b.c.d); 3fff::/20, documentation (RFC 9637).
  ['::', 96], ['::ffff:0:0:0', 96], ['3fff::', 20], ['64:ff9b::', 96], ['64:ff9b:1::', 48], ['100::', 64], ['2001::', 23], ['2001:db8::', 32], ['2002::', 16],
  ['fc00::', 7], ['fe80::', 10], ['fec0::', 10], ['ff00::', 8],
] as const)
  NON_PUBLIC.addSubnet(net, bits, 'ipv6');

/** Whether an IP address is public (an IPv4-mapped IPv6 address is judged as its IPv4 address). */
export function isPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return !NON_PUBLIC.check(address, 'ipv4');
  if (family !== 6) return false;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return isPublicAddress(mapped[1]);
  if (/^::ffff:/i.test(address)) return false;
  return !NON_PUBLIC.check(address, 'ipv6');
}

/** An address the target's host was resolved to and checked: the one to connect to. */
export interface CheckedTarget {
  url: URL;
  address: string;
  family: 4 | 6;
}

export class TargetRefused extends Error {}

const LOOKUP_TIMEOUT_MS = 5000;

/**
 * A target's host name is resolved by DNS queries (c-ares: on the event loop, each query given up after 2 s,
 * twice), not by the system's `getaddrinfo`: that runs on libuv's pool of 4 threads and cannot be given up, so a
 * tenant's name server that never answers would hold those threads, and every other tenant's checks (and the
 * process's file and crypto work) behind them. Names listed in WEBHOOK_ALLOWED_HOSTS, chosen by the operator,
 * are looked up the system's way (they may live in /etc/hosts); any other name only in /etc/hosts does not
 * resolve. `localhost` and the names under it are loopback whatever a resolver says (RFC 6761).
 */
const resolver = new Resolver({ timeout: 2000, tries: 2 });
const LOOPBACK_NAME = /^(?:.+\.)?localhost\.?$/;
const LOOPBACK = [{ address: '127.0.0.1', family: 4 }, { address: '::1', family: 6 }];

/** Every address of a host name: IPv4 first (the one connected to is the first). */
async function addressesOf(host: string, allowed: boolean): Promise<Array<{ address: string; family: number }>> {
  if (LOOPBACK_NAME.test(host)) return LOOPBACK;
  if (allowed) return lookup(host, { all: true, verbatim: true });
  const [v4, v6] = await Promise.allSettled([resolver.resolve4(host), resolver.resolve6(host)]);
  const of = (r: PromiseSettledResult<string[]>, family: number) => (r.status === 'fulfilled' ? r.value.map((address) => ({ address, family })) : []);
  return [...of(v4, 4), ...of(v6, 6)];
}

/** A host without IPv6 brackets, lower-cased. */
const bare = (host: string) => (host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host).toLowerCase();

/**
 * Parses and checks a webhook URL: the scheme, no credentials, and every address its host resolves to
 * (an allowed host is taken as it resolves). Throws TargetRefused saying why.
 */
export async function checkTarget(text: string, allowedHosts: readonly string[]): Promise<CheckedTarget> {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new TargetRefused('must be an absolute http:// or https:// URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new TargetRefused('must be an http:// or https:// URL');
  if (url.username || url.password) throw new TargetRefused('must not carry credentials');
  const host = bare(url.hostname);
  const allowed = allowedHosts.some((h) => bare(h) === host);
  let addresses: Array<{ address: string; family: number }>;
  if (isIP(host)) addresses = [{ address: host, family: isIP(host) }];
  else {
    let timer: NodeJS.Timeout | undefined;
    try {
      addresses = await Promise.race([
        addressesOf(host, allowed),
        new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error('timeout')), LOOKUP_TIMEOUT_MS))),
      ]);
    } catch {
      throw new TargetRefused(`host ${host} does not resolve`);
    } finally {
      clearTimeout(timer);
    }
  }
  if (!addresses.length) throw new TargetRefused(`host ${host} does not resolve`);
  const refused = allowed ? undefined : addresses.find((a) => !isPublicAddress(a.address));
  if (refused) throw new TargetRefused(`host ${host} is or resolves to a non-public address (${refused.address}); list it in WEBHOOK_ALLOWED_HOSTS to allow it`);
  return { url, address: addresses[0].address, family: addresses[0].family === 6 ? 6 : 4 };
}
