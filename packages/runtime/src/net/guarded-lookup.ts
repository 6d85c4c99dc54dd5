import { promises as dns, type LookupAddress } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { isAddressAllowed, isAdmittableByAllowedNetworks } from './address-policy';
import type { ParsedCidr } from './allowed-networks';
import { AddressNotAllowedError } from './errors';

/** Resolves a host name to every address of the requested family (0 = both). Injectable so tests can rebind. */
export type Resolver = (hostname: string, family: 0 | 4 | 6) => Promise<LookupAddress[]>;

/** The system resolver (getaddrinfo: /etc/hosts, then DNS), all addresses. */
export const systemResolver: Resolver = (hostname, family) => dns.lookup(hostname, { all: true, family });

export interface GuardedLookupOptions {
  resolve?: Resolver;
}

/**
 * Resolves `hostname` and judges every address. Refuses the whole name when ANY address is refused, rather than
 * silently keeping the allowed ones: a name that mixes public and internal addresses is either misconfigured or
 * an attack, and the stricter answer cannot be turned into a bypass.
 */
export async function resolveAllowedAddresses(
  hostname: string,
  allowedNetworks: readonly ParsedCidr[],
  family: 0 | 4 | 6 = 0,
  resolve: Resolver = systemResolver,
): Promise<LookupAddress[]> {
  const bare = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
  const literalFamily = isIP(bare);
  // Literal addresses never reach the resolver: judge them as they are.
  const addresses = literalFamily !== 0 ? [{ address: bare, family: literalFamily }] : await resolve(bare, family);
  if (addresses.length === 0) throw new AddressNotAllowedError('the host has no address');
  const refused = addresses
    .map(({ address }) => ({ address, verdict: isAddressAllowed(address, allowedNetworks) }))
    .filter(({ verdict }) => !verdict.allowed);
  // One that nothing admits is named first: a refusal may say that ALLOWED_INTERNAL_NETWORKS could admit the address.
  const named = refused.find(({ address }) => !isAdmittableByAllowedNetworks(address)) ?? refused[0];
  if (named) throw new AddressNotAllowedError(`the host resolves to a refused address (${named.verdict.reason})`, named.address);
  return addresses;
}

/**
 * A `dns.lookup`-compatible function for the `lookup` option of `net.connect`, `tls.connect` and undici's
 * `connect`. Node calls it for every connection to a host name, so the address judged is the address connected to:
 * a name that rebinds to an internal address after passing an earlier check is refused at connect time.
 * Node skips `lookup` for literal IPs; `createGuardedConnector` checks those.
 */
export function createGuardedLookup(allowedNetworks: readonly ParsedCidr[], options: GuardedLookupOptions = {}): LookupFunction {
  const resolve = options.resolve ?? systemResolver;
  return (hostname, lookupOptions, callback) => {
    const all = (lookupOptions as { all?: boolean }).all === true;
    resolveAllowedAddresses(hostname, allowedNetworks, normaliseFamily(lookupOptions.family), resolve).then(
      (addresses) => {
        if (all) callback(null, addresses);
        else callback(null, addresses[0]!.address, addresses[0]!.family);
      },
      (error: unknown) => callback(error as NodeJS.ErrnoException, all ? [] : '', 0),
    );
  };
}

function normaliseFamily(family: number | 'IPv4' | 'IPv6' | undefined): 0 | 4 | 6 {
  if (family === 4 || family === 'IPv4') return 4;
  if (family === 6 || family === 'IPv6') return 6;
  return 0;
}
