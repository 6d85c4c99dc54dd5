import ipaddr from 'ipaddr.js';
import { isInNetworks, type ParsedCidr } from './allowed-networks';

export interface AddressVerdict {
  allowed: boolean;
  /** Why the address was refused (a range name such as `loopback`), absent when allowed. */
  reason?: string;
}

type Cidr = [ipaddr.IPv4 | ipaddr.IPv6, number];

function cidrs(...texts: string[]): Cidr[] {
  return texts.map((text) => ipaddr.parseCIDR(text));
}

/**
 * Refused even when inside ALLOWED_INTERNAL_NETWORKS: no operator means to let a tenant reach the cloud metadata
 * service, and "unspecified", multicast and broadcast are never a server (0.0.0.0 even reaches localhost on Linux).
 */
const NEVER_ALLOWED: Record<string, Cidr[]> = {
  cloudMetadata: cidrs(
    '169.254.169.254/32', // AWS, GCP, Azure, OpenStack
    '169.254.170.2/32', // AWS ECS task metadata
    '100.100.100.200/32', // Alibaba Cloud
    'fd00:ec2::254/128', // AWS over IPv6
  ),
  unspecified: cidrs('0.0.0.0/8', '::/128'),
  multicast: cidrs('224.0.0.0/4', 'ff00::/8'),
  broadcast: cidrs('255.255.255.255/32'),
};

/**
 * Refused unless inside ALLOWED_INTERNAL_NETWORKS. Listed explicitly rather than trusting ipaddr's `range()` alone,
 * because some of these are "unicast" to ipaddr and its tables change between versions. First match names the reason.
 */
const BLOCKED: Record<string, Cidr[]> = {
  loopback: cidrs('127.0.0.0/8', '::1/128'),
  private: cidrs('10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16'),
  linkLocal: cidrs('169.254.0.0/16', 'fe80::/10'),
  carrierGradeNat: cidrs('100.64.0.0/10'),
  ietfProtocolAssignments: cidrs('192.0.0.0/24'),
  documentation: cidrs('192.0.2.0/24', '198.51.100.0/24', '203.0.113.0/24', '2001:db8::/32', '3fff::/20'),
  benchmarking: cidrs('198.18.0.0/15', '2001:2::/48'),
  sixToFourRelay: cidrs('192.88.99.0/24'),
  reserved: cidrs('240.0.0.0/4'),
  // IPv6 forms that embed or translate to an IPv4 address somewhere we cannot see: refuse them all.
  ipv4Compatible: cidrs('::/96'),
  nat64: cidrs('64:ff9b::/96', '64:ff9b:1::/48'),
  sixToFour: cidrs('2002::/16'),
  teredo: cidrs('2001::/32'),
  discard: cidrs('100::/64'),
  uniqueLocal: cidrs('fc00::/7'),
  siteLocal: cidrs('fec0::/10'),
};

/** IANA's global unicast block; other IPv6 space is reserved or special-purpose. */
const IPV6_GLOBAL_UNICAST = ipaddr.parseCIDR('2000::/3');

/**
 * Judges one IP address (as a resolver returns it; bracketed IPv6 and the lenient IPv4 forms inet_aton accepts are
 * understood too) against the platform's address policy: public unicast only, plus `allowedNetworks`.
 * IPv4-mapped (`::ffff:a.b.c.d`) and IPv4-translated (`::ffff:0:a.b.c.d`) IPv6 are unwrapped and judged as IPv4.
 */
export function isAddressAllowed(address: string, allowedNetworks: readonly ParsedCidr[]): AddressVerdict {
  if (address.includes('%')) return { allowed: false, reason: 'zoneId' };
  const parsed = parseAddress(address);
  if (!parsed) return { allowed: false, reason: 'notAnIpAddress' };
  const ip = unwrapEmbeddedIPv4(parsed);

  const never = neverAllowedReason(ip);
  if (never) return { allowed: false, reason: never };
  if (isInNetworks(ip, allowedNetworks)) return { allowed: true };

  const blocked = firstMatch(ip, BLOCKED);
  if (blocked) return { allowed: false, reason: blocked };
  const range = ip.range();
  if (range !== 'unicast') return { allowed: false, reason: range };
  if (ip.kind() === 'ipv6' && !ip.match(IPV6_GLOBAL_UNICAST)) return { allowed: false, reason: 'notGlobalUnicast' };
  return { allowed: true };
}

/**
 * Whether ALLOWED_INTERNAL_NETWORKS could admit this address: any but the never-allowed ranges (and what is no
 * address at all). Lets a refusal tell the person what the operator could change, only where it would help.
 */
export function isAdmittableByAllowedNetworks(address: string): boolean {
  if (address.includes('%')) return false;
  const parsed = parseAddress(address);
  return parsed !== undefined && neverAllowedReason(unwrapEmbeddedIPv4(parsed)) === undefined;
}

/** What the never-allowed ranges say of an address, or of the IPv4 address it may be translated to on the way. */
function neverAllowedReason(ip: ipaddr.IPv4 | ipaddr.IPv6): string | undefined {
  const own = firstMatch(ip, NEVER_ALLOWED);
  if (own) return own;
  const translated = translatedIPv4Of(ip);
  return translated && firstMatch(translated, NEVER_TRANSLATED);
}

/** The never-allowed ranges judged on a translated IPv4 too; `unspecified` is not, since `::1` is `0.0.0.1` to it. */
const NEVER_TRANSLATED: Record<string, Cidr[]> = { cloudMetadata: NEVER_ALLOWED.cloudMetadata!, multicast: NEVER_ALLOWED.multicast!, broadcast: NEVER_ALLOWED.broadcast! };
const TRANSLATED_IN_LAST_32_BITS = cidrs('64:ff9b::/96', '64:ff9b:1::/48', '::/96');
const SIX_TO_FOUR = ipaddr.parseCIDR('2002::/16');

/**
 * The IPv4 address an IPv6 one reaches through a translator: NAT64 (RFC 6052's /96 form, also the usual one inside
 * the local-use 64:ff9b:1::/48), IPv4-compatible (`::/96`) and 6to4 (`2002::/16`). These are refused unless
 * ALLOWED_INTERNAL_NETWORKS admits them, and an operator of an IPv6-only cluster with DNS64 may well admit
 * 64:ff9b::/96 (every IPv4-only public host resolves into it): that must not admit the metadata service behind it.
 */
function translatedIPv4Of(ip: ipaddr.IPv4 | ipaddr.IPv6): ipaddr.IPv4 | undefined {
  if (ip.kind() !== 'ipv6') return undefined;
  const v6 = ip as ipaddr.IPv6;
  if (TRANSLATED_IN_LAST_32_BITS.some(([network, prefix]) => v6.match(network, prefix))) return ipv4InLast32Bits(v6);
  // 6to4 carries it in bits 16-47: 2002:AABB:CCDD::.
  if (v6.match(SIX_TO_FOUR)) return ipv4OfParts(v6.parts[1]!, v6.parts[2]!);
  return undefined;
}

function parseAddress(address: string): ipaddr.IPv4 | ipaddr.IPv6 | undefined {
  const bare = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address;
  try {
    // ipaddr reads `::a.b.c.d` as IPv4-mapped, but the kernel dials it as IPv4-compatible (`::7f00:1`). The WHATWG
    // URL parser serialises IPv6 the way the address is really used, all in hex, so IPv6 is read through it first.
    return ipaddr.parse(bare.includes(':') ? new URL(`http://[${bare}]/`).hostname.slice(1, -1) : bare);
  } catch {
    return undefined;
  }
}

function unwrapEmbeddedIPv4(ip: ipaddr.IPv4 | ipaddr.IPv6): ipaddr.IPv4 | ipaddr.IPv6 {
  if (ip.kind() === 'ipv4') return ip;
  const v6 = ip as ipaddr.IPv6;
  const range = v6.range();
  if (range === 'ipv4Mapped') return v6.toIPv4Address();
  if (range === 'rfc6145') return ipv4InLast32Bits(v6);
  return v6;
}

/** The IPv4 address an IPv6 one carries in its last 32 bits (IPv4-translated, NAT64's /96 form, IPv4-compatible). */
export function ipv4InLast32Bits(ip: ipaddr.IPv6): ipaddr.IPv4 {
  return ipv4OfParts(ip.parts[6]!, ip.parts[7]!);
}

/** The IPv4 address two 16-bit parts of an IPv6 address spell. */
function ipv4OfParts(high: number, low: number): ipaddr.IPv4 {
  return new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff]);
}

function firstMatch(ip: ipaddr.IPv4 | ipaddr.IPv6, table: Record<string, Cidr[]>): string | undefined {
  for (const [name, ranges] of Object.entries(table)) {
    if (ranges.some(([network, prefix]) => network.kind() === ip.kind() && ip.match(network, prefix))) return name;
  }
  return undefined;
}
