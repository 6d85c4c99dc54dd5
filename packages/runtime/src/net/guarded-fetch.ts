import type { IncomingHttpHeaders } from 'node:http';
import { isIP } from 'node:net';
import { request } from 'undici';
import { isAddressAllowed } from './address-policy';
import type { ParsedCidr } from './allowed-networks';
import { AddressNotAllowedError, FetchFailedError, FetchTimeoutError, ResponseTooLargeError } from './errors';
import { createGuardedDispatcher } from './guarded-dispatcher';
import type { Resolver } from './guarded-lookup';
import { checkUrlShape } from './url-policy';

export interface GuardedFetchOptions {
  allowedNetworks: readonly ParsedCidr[];
  /** One deadline for everything: DNS, connect, TLS, headers and the whole body. */
  timeoutMs: number;
  /** Largest body accepted; one byte more fails with ResponseTooLargeError. */
  maxBytes: number;
  method?: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  tls?: { ca?: string | Buffer };
  /** Allow plain `http:`; only `https:` otherwise. */
  allowHttp?: boolean;
  /** Replaces the system resolver (tests). */
  resolve?: Resolver;
}

export interface GuardedResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/**
 * Fetches a URL on behalf of a tenant or a client (SSRF-exposed): only addresses the policy allows, checked at
 * connect time; no proxy; redirects are never followed (a 3xx comes back as is, the caller decides); one overall
 * timeout; the body read with a cap. Every failure is typed; no message carries the response body.
 */
export async function guardedFetch(url: string | URL, options: GuardedFetchOptions): Promise<GuardedResponse> {
  const target = checkUrlShape(url, options.allowHttp ? { allowHttp: true } : {});
  assertLiteralHostAllowed(target, options.allowedNetworks);

  const signal = AbortSignal.timeout(options.timeoutMs);
  // One dispatcher per call: no pooled connection outlives its check, and nothing is shared between tenants.
  const dispatcher = createGuardedDispatcher({
    allowedNetworks: options.allowedNetworks,
    connectTimeoutMs: options.timeoutMs,
    ...(options.tls?.ca !== undefined ? { ca: options.tls.ca } : {}),
    ...(options.resolve ? { resolve: options.resolve } : {}),
  });
  try {
    const response = await request(target, {
      dispatcher,
      signal,
      method: options.method ?? 'GET',
      ...(options.headers ? { headers: options.headers } : {}),
      ...(options.body !== undefined ? { body: options.body } : {}),
    });
    const body = await readCapped(response.body, response.headers, options.maxBytes);
    return { status: response.statusCode, headers: response.headers, body };
  } catch (error) {
    throw translateError(error, signal, options.timeoutMs);
  } finally {
    await dispatcher.destroy().catch(() => undefined);
  }
}

/** Fails fast, before any dispatcher exists; the connector checks again for every connection. */
function assertLiteralHostAllowed(target: URL, allowedNetworks: readonly ParsedCidr[]): void {
  const host = target.hostname.replace(/^\[(.*)\]$/, '$1');
  if (isIP(host) === 0) return;
  const verdict = isAddressAllowed(host, allowedNetworks);
  if (!verdict.allowed) throw new AddressNotAllowedError(`the address is refused (${verdict.reason})`, host);
}

async function readCapped(body: AsyncIterable<Buffer> & { destroy(): unknown }, headers: IncomingHttpHeaders, maxBytes: number): Promise<Buffer> {
  const declared = Number(headers['content-length']);
  if (Number.isFinite(declared) && declared > maxBytes) {
    body.destroy();
    throw new ResponseTooLargeError(maxBytes);
  }
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of body) {
    total += chunk.length;
    // The chunk that crosses the cap is dropped, never kept: at most maxBytes are held.
    if (total > maxBytes) {
      body.destroy();
      throw new ResponseTooLargeError(maxBytes);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, total);
}

function translateError(error: unknown, signal: AbortSignal, timeoutMs: number): Error {
  const known = findInCauses(error, (e) => e instanceof AddressNotAllowedError || e instanceof ResponseTooLargeError);
  if (known) return known;
  if (signal.aborted || findInCauses(error, (e) => (e as { code?: unknown }).code === 'UND_ERR_CONNECT_TIMEOUT')) {
    return new FetchTimeoutError(timeoutMs);
  }
  const code = (error as { code?: unknown } | undefined)?.code;
  const label = typeof code === 'string' ? code : error instanceof Error ? error.name : 'unknown';
  return new FetchFailedError(`The request failed (${label})`, error);
}

function findInCauses(error: unknown, test: (e: Error) => boolean): Error | undefined {
  let current: unknown = error;
  for (let depth = 0; current instanceof Error && depth < 5; depth += 1) {
    if (test(current)) return current;
    current = current.cause;
  }
  return undefined;
}
