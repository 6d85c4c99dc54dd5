import type { IncomingMessage } from 'node:http';
import proxyaddr from 'proxy-addr';

/** Whether the hop at `address`, `hop` steps from the socket, is a proxy whose `X-Forwarded-For` is believed. */
export type TrustProxy = (address: string, hop: number) => boolean;

/** TRUST_PROXY as configured: `true`/`false`, a hop count, or a comma list of addresses, subnets or names. */
export type TrustProxySetting = boolean | number | string;

/**
 * Compiles TRUST_PROXY once per edge, by express's own rules for `trust proxy` (its `compileTrust`). The edge gives
 * express this very function, so express's `req.ip` and what is served ahead of express name the same client.
 */
export function compileTrustProxy(setting: TrustProxySetting | TrustProxy | undefined): TrustProxy {
  if (typeof setting === 'function') return setting;
  const value = typeof setting === 'string' ? parseTrustProxy(setting) : setting;
  if (value === true) return () => true;
  if (typeof value === 'number') return (_address, hop) => hop < value;
  if (typeof value === 'string') return proxyaddr.compile(value.split(',').map((entry) => entry.trim()));
  return proxyaddr.compile([]);
}

/** The client's address: the socket's, or the farthest hop the trusted proxies vouch for (express's `req.ip`). */
export function clientAddress(req: IncomingMessage, trust: TrustProxy): string {
  // proxy-addr answers undefined for a socket already gone, as `req.ip` then is.
  return (proxyaddr(req, trust) as string | undefined) ?? '';
}

/** TRUST_PROXY arrives as a string: `true`/`false`, a hop count, or a list of addresses. */
function parseTrustProxy(value: string): TrustProxySetting {
  const trimmed = value.trim();
  if (trimmed === 'true') return true;
  if (trimmed === 'false') return false;
  if (/^\d+$/.test(trimmed)) return Number(trimmed);
  return trimmed;
}
