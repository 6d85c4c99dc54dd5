import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { RequestOptions } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { firstAbortOf, parseAllowedNetworks, type ParsedCidr } from '@platform/runtime';
import type { CatalogDeps } from '../deps';
import type { McpServerRow } from '../store/mcp-servers-mappers';
import { upstreamClient } from './upstream-client';
import { guardedFetchFor, MAX_HANDSHAKE_BYTES, type GuardedFetch } from './upstream-fetch';
import { upstreamHeadersOf } from './upstream-headers';
import { valueBoundedTransport, type BoundedTransport } from './upstream-messages';

/** What discovery and a health check need of a server: where it is, how to talk to it, and its credential already decrypted. */
export interface DiscoveryTarget {
  url: string;
  transport: string;
  /** Static headers (the credential among them), already unsealed. */
  headers: Record<string, string>;
  timeoutSeconds: number;
  allowedNetworks: readonly ParsedCidr[];
}

/** Where and how a stored server is reached, its credential unsealed: what a discovery and a health check are given. */
export function upstreamTargetOf(deps: Pick<CatalogDeps, 'config' | 'secrets'>, row: McpServerRow): DiscoveryTarget {
  return {
    url: row.url,
    transport: row.transport,
    headers: upstreamHeadersOf(deps, row),
    timeoutSeconds: row.timeout_seconds,
    allowedNetworks: parseAllowedNetworks(deps.config.env.ALLOWED_INTERNAL_NETWORKS),
  };
}

export function transportFor(target: DiscoveryTarget, fetch: (url: string | URL, init?: RequestInit) => Promise<Response>): Transport {
  const url = new URL(target.url);
  const requestInit: RequestInit = { headers: target.headers };
  if (target.transport === 'sse') return new SSEClientTransport(url, { requestInit, fetch });
  return new StreamableHTTPClientTransport(url, { requestInit, fetch, reconnectionOptions: { maxRetries: 0, initialReconnectionDelay: 1000, maxReconnectionDelay: 1000, reconnectionDelayGrowFactor: 1 } });
}

/** One exchange with an upstream, not yet connected: the SDK client, what bounds it, and how to end it. */
export interface UpstreamExchange {
  /** The server's timeout, in ms. */
  timeout: number;
  guarded: GuardedFetch;
  bounded: BoundedTransport;
  client: Client;
  /** Aborted by any of the caller's stops, or once the upstream sent too many bytes or a message of too many values. */
  stop: AbortSignal;
  /** Each request within the server's timeout, and stopped by `stop`. */
  options: RequestOptions;
  /** Closes the client and destroys its connections, whatever is in flight; never throws. */
  close(): Promise<void>;
}

/**
 * The exchange discovery and a health check each have with an upstream: the guarded fetch (reading at most
 * MAX_HANDSHAKE_BYTES until the caller allows more), each message bounded in values, the SDK client named
 * `clientName`. The caller races its work against `stop` (upstream-client.ts, `raced`) and closes the exchange once
 * that settles.
 */
export function upstreamExchange(target: DiscoveryTarget, clientName: string, stops: readonly AbortSignal[]): UpstreamExchange {
  const timeout = target.timeoutSeconds * 1000;
  const guarded = guardedFetchFor(target.allowedNetworks, timeout, MAX_HANDSHAKE_BYTES);
  const bounded = valueBoundedTransport(transportFor(target, guarded.fetch));
  const client = upstreamClient(clientName);
  // The SDK listens to it once per request and never stops: with AbortSignal.any that kept every exchange's client for
  // the life of the process (runtime first-abort.ts).
  const stop = firstAbortOf([...stops, guarded.overflowed, bounded.refused]);
  return {
    timeout,
    guarded,
    bounded,
    client,
    stop: stop.signal,
    options: { timeout, maxTotalTimeout: timeout, signal: stop.signal },
    async close() {
      stop.release();
      await client.close().catch(() => undefined);
      await guarded.close().catch(() => undefined);
    },
  };
}
