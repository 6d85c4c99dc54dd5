import { isIP } from 'node:net';
import { Agent, buildConnector } from 'undici';
import { isAddressAllowed } from './address-policy';
import type { ParsedCidr } from './allowed-networks';
import { AddressNotAllowedError } from './errors';
import { createGuardedLookup, type Resolver } from './guarded-lookup';

export interface GuardedDispatcherOptions {
  allowedNetworks: readonly ParsedCidr[];
  /** Time allowed for TCP + TLS setup of each connection; undici's default (10 s) otherwise. */
  connectTimeoutMs?: number;
  /**
   * Time allowed until a response's headers arrive, and between two pieces of its body (undici's `headersTimeout`
   * and `bodyTimeout`, 300 s each by default). Idle times only: an upstream sending a byte now and then resets them,
   * so a caller that needs an end bounds the whole exchange itself.
   */
  headersTimeoutMs?: number;
  bodyTimeoutMs?: number;
  /** Extra trust anchors, replacing the system store (tests trust a self-signed certificate this way). */
  ca?: string | Buffer;
  resolve?: Resolver;
}

/**
 * An undici connector that applies the address policy to every connection it opens: host names through the guarded
 * `lookup` (checked on the addresses actually dialled), literal IPs here, because Node skips `lookup` for them.
 */
export function createGuardedConnector(options: GuardedDispatcherOptions): buildConnector.connector {
  const lookup = createGuardedLookup(options.allowedNetworks, options.resolve ? { resolve: options.resolve } : {});
  const base = buildConnector({
    lookup,
    ...(options.connectTimeoutMs !== undefined ? { timeout: options.connectTimeoutMs } : {}),
    ...(options.ca !== undefined ? { ca: options.ca } : {}),
  });
  return (connectOptions, callback) => {
    const host = connectOptions.hostname.replace(/^\[(.*)\]$/, '$1');
    if (isIP(host) !== 0) {
      const verdict = isAddressAllowed(host, options.allowedNetworks);
      if (!verdict.allowed) {
        callback(new AddressNotAllowedError(`the address is refused (${verdict.reason})`, host), null);
        return;
      }
    }
    base(connectOptions, callback);
  };
}

/**
 * An undici dispatcher whose connections all pass the address guard. Deliberately a plain `Agent`: never the global
 * dispatcher and never `EnvHttpProxyAgent`, so HTTP(S)_PROXY cannot route a guarded request elsewhere. For callers
 * that stream (MCP proxying); `guardedFetch` uses one per call.
 */
export function createGuardedDispatcher(options: GuardedDispatcherOptions): Agent {
  return new Agent({
    connect: createGuardedConnector(options),
    ...(options.headersTimeoutMs !== undefined ? { headersTimeout: options.headersTimeoutMs } : {}),
    ...(options.bodyTimeoutMs !== undefined ? { bodyTimeout: options.bodyTimeoutMs } : {}),
  });
}
