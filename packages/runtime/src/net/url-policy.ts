import type { ParsedCidr } from './allowed-networks';
import { AddressNotAllowedError } from './errors';
import { resolveAllowedAddresses, systemResolver, type Resolver } from './guarded-lookup';

export interface UrlPolicyOptions {
  /** Allow plain `http:` (webhooks may); otherwise only `https:`. */
  allowHttp?: boolean;
}

/**
 * The checks on a URL that need no network: absolute, http(s) only, no credentials. The WHATWG parser has already
 * turned decimal, octal and hex IPv4 spellings (`http://0x7f.1/`) into dotted quads, which the address check judges.
 */
export function checkUrlShape(url: string | URL, options: UrlPolicyOptions = {}): URL {
  let parsed: URL;
  try {
    parsed = typeof url === 'string' ? new URL(url) : new URL(url.href);
  } catch {
    throw new AddressNotAllowedError('it is not a valid absolute URL');
  }
  const schemes = options.allowHttp ? ['https:', 'http:'] : ['https:'];
  if (!schemes.includes(parsed.protocol)) throw new AddressNotAllowedError(`the scheme must be ${schemes.join(' or ')}`);
  if (parsed.username !== '' || parsed.password !== '') throw new AddressNotAllowedError('it must not carry credentials');
  if (parsed.hostname === '') throw new AddressNotAllowedError('it has no host');
  return parsed;
}

export interface AssertUrlAllowedOptions extends UrlPolicyOptions {
  resolve?: Resolver;
}

/**
 * Validates a URL when it is saved: its shape, then its host resolved now. A host that does not resolve is refused
 * too. This is advisory for later use: every connection is checked again at connect time by the guarded lookup.
 * Throws `AddressNotAllowedError` (an AppError `address_not_allowed`, 422).
 */
export async function assertUrlAllowed(url: string | URL, allowedNetworks: readonly ParsedCidr[], options: AssertUrlAllowedOptions = {}): Promise<void> {
  const parsed = checkUrlShape(url, options);
  const resolve = options.resolve ?? systemResolver;
  try {
    await resolveAllowedAddresses(parsed.hostname, allowedNetworks, 0, resolve);
  } catch (error) {
    if (error instanceof AddressNotAllowedError) throw error;
    throw new AddressNotAllowedError('the host could not be resolved', undefined);
  }
}
