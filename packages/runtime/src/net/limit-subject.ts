import ipaddr from 'ipaddr.js';
import { ipv4InLast32Bits } from './address-policy';

/**
 * What a per-address limit counts for a client address: an IPv4 address as it is (also when it arrives IPv4-mapped,
 * as on a dual-stack socket, or translated into the NAT64 prefix 64:ff9b::/96 by an IPv6-only ingress, RFC 6052), an
 * IPv6 address by its /64. Interface ids are 64 bits (RFC 4291): a host may use any of the 2^64 addresses of its
 * network's /64, so counted address by address, a client rotating through its own addresses would never be limited.
 * Anything else (no address, an unparsable one) is returned as it is.
 */
export function limitSubjectOf(address: string): string {
  const bare = address.replace(/%.*$/, '');
  if (!ipaddr.IPv6.isValid(bare)) return address;
  const parsed = ipaddr.IPv6.parse(bare);
  if (parsed.isIPv4MappedAddress()) return parsed.toIPv4Address().toString();
  if (parsed.range() === 'rfc6052') return ipv4InLast32Bits(parsed).toString();
  return `${parsed.parts
    .slice(0, 4)
    .map((part) => part.toString(16))
    .join(':')}::/64`;
}
