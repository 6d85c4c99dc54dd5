import ipaddr from 'ipaddr.js';

/** One network from `ALLOWED_INTERNAL_NETWORKS`, parsed once at startup. */
export interface ParsedCidr {
  address: ipaddr.IPv4 | ipaddr.IPv6;
  prefixLength: number;
  /** The entry as written, for logs and error messages. */
  text: string;
}

/** A bad `ALLOWED_INTERNAL_NETWORKS` value; the message names the offending entry so the operator can fix it. */
export class AllowedNetworksError extends Error {
  readonly entry: string;

  constructor(entry: string, problem: string) {
    super(`ALLOWED_INTERNAL_NETWORKS entry "${entry}" ${problem} (expected CIDRs such as 10.0.0.0/8 or fd12:3456::/48, comma-separated)`);
    this.name = 'AllowedNetworksError';
    this.entry = entry;
  }
}

/**
 * Parses the comma-separated CIDR list of `ALLOWED_INTERNAL_NETWORKS`. Empty or missing means none.
 * IPv4 networks must be written in four-part decimal: the lenient forms ipaddr accepts (`10.1/8`, hex) are
 * refused here because an operator writing them almost certainly meant something else.
 */
export function parseAllowedNetworks(value: string | undefined): ParsedCidr[] {
  if (value === undefined) return [];
  const networks: ParsedCidr[] = [];
  for (const raw of value.split(',')) {
    const text = raw.trim();
    if (text === '') continue;
    networks.push(parseOne(text));
  }
  return networks;
}

/** Reads `ALLOWED_INTERNAL_NETWORKS` from the environment. */
export function allowedNetworksFromEnv(env: NodeJS.ProcessEnv = process.env): ParsedCidr[] {
  return parseAllowedNetworks(env.ALLOWED_INTERNAL_NETWORKS);
}

function parseOne(text: string): ParsedCidr {
  if (!text.includes('/')) throw new AllowedNetworksError(text, 'has no prefix length');
  if (text.includes('%')) throw new AllowedNetworksError(text, 'must not carry a zone id');
  const isV4 = !text.includes(':');
  if (isV4 ? !ipaddr.IPv4.isValidCIDRFourPartDecimal(text) : !ipaddr.IPv6.isValidCIDR(text)) {
    throw new AllowedNetworksError(text, 'is not a valid CIDR');
  }
  const [address, prefixLength] = ipaddr.parseCIDR(text);
  return { address, prefixLength, text };
}

/** True when `address` lies inside one of `networks` (same address family only). */
export function isInNetworks(address: ipaddr.IPv4 | ipaddr.IPv6, networks: readonly ParsedCidr[]): boolean {
  return networks.some((network) => network.address.kind() === address.kind() && address.match(network.address, network.prefixLength));
}
