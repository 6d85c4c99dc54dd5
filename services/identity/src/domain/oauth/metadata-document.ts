import { readFileSync } from 'node:fs';
import { rootCertificates } from 'node:tls';
import type { IncomingHttpHeaders } from 'node:http';
import { AddressNotAllowedError, GuardedFetchError, guardedFetch, parseAllowedNetworks, type ParsedCidr } from '@platform/runtime';
import type { IdentityDeps } from '../../deps';
import {
  MAX_CLIENT_NAME,
  METADATA_CACHE_DEFAULT_SECONDS,
  METADATA_CACHE_MAX_SECONDS,
  METADATA_CACHE_MIN_SECONDS,
  METADATA_FETCH_TIMEOUT_MS,
  METADATA_MAX_BYTES,
} from './limits';
import { clientIdUrlProblem, httpsUrlProblem, isStorable, redirectUriProblem, UNSTORABLE } from './validation';

/** A client as its metadata document describes it (draft-ietf-oauth-client-id-metadata-document). */
export interface MetadataClient {
  clientId: string;
  clientName: string;
  clientUri: string;
  logoUri: string;
  redirectUris: string[];
}

export type MetadataResult = { client: MetadataClient; problem?: undefined } | { client?: undefined; problem: string };

/** Documents kept at most; the oldest go first (bounds memory against many distinct URLs). */
const MAX_CACHED = 1000;

/**
 * Fetches and checks client ID metadata documents through the address guard. Only a valid document is cached (the
 * response's max-age clamped to 1 min..1 h); a failed fetch or an invalid document never is
 * (draft-ietf-oauth-client-id-metadata-document-02 §5.2: "MUST NOT cache error responses" nor "documents which are
 * invalid or malformed"), so a fixed document works at the next attempt. What keeps a failing URL from being
 * fetched in a loop: concurrent resolutions of one URL share the fetch in flight, and every resolution comes from
 * an authorize request, which the edge limits per client address (docs/oauth.md, Rate limits).
 */
export class MetadataDocuments {
  private readonly cached = new Map<string, { client: MetadataClient; until: number }>();
  private readonly inFlight = new Map<string, Promise<MetadataResult>>();

  constructor(
    private readonly fetchOptions: { allowedNetworks: readonly ParsedCidr[]; ca?: string },
    private readonly now: () => number = Date.now,
  ) {}

  async resolve(url: string): Promise<MetadataResult> {
    const hit = this.cached.get(url);
    if (hit && hit.until > this.now()) return { client: hit.client };
    const running = this.inFlight.get(url);
    if (running) return running;
    const fetching = this.fetchAndCheck(url).finally(() => this.inFlight.delete(url));
    this.inFlight.set(url, fetching);
    return fetching;
  }

  private async fetchAndCheck(url: string): Promise<MetadataResult> {
    const shape = clientIdUrlProblem(url);
    if (shape) return { problem: `The client ID ${shape}.` };
    let result: MetadataResult;
    try {
      const response = await guardedFetch(url, {
        allowedNetworks: this.fetchOptions.allowedNetworks,
        timeoutMs: METADATA_FETCH_TIMEOUT_MS,
        maxBytes: METADATA_MAX_BYTES,
        headers: { accept: 'application/json' },
        ...(this.fetchOptions.ca ? { tls: { ca: this.fetchOptions.ca } } : {}),
      });
      result = checkResponse(url, response.status, response.body);
      if (result.client) {
        this.remember(url, result.client, cacheSeconds(response.headers));
        return result;
      }
    } catch (error) {
      result = { problem: fetchProblem(error) };
    }
    // The expired copy that led here goes too: it is never served again.
    this.cached.delete(url);
    return result;
  }

  private remember(url: string, client: MetadataClient, seconds: number): void {
    this.cached.delete(url);
    this.cached.set(url, { client, until: this.now() + seconds * 1000 });
    while (this.cached.size > MAX_CACHED) this.cached.delete(this.cached.keys().next().value!);
  }
}

const UNFETCHABLE = "The client's metadata document could not be fetched.";

/**
 * Why a fetch failed, as the authorize error page shows it to whoever sent the request. An address the guard refuses
 * reads like a host that does not resolve: naming the refusal (or its range) would tell an outsider which host names
 * resolve to internal addresses.
 */
function fetchProblem(error: unknown): string {
  if (error instanceof AddressNotAllowedError) return UNFETCHABLE;
  if (error instanceof GuardedFetchError) {
    switch (error.code) {
      case 'fetch_timeout':
        return `The client's metadata document did not arrive within ${METADATA_FETCH_TIMEOUT_MS / 1000} seconds.`;
      case 'response_too_large':
        return `The client's metadata document is larger than ${METADATA_MAX_BYTES / 1024} KiB.`;
      default:
        return UNFETCHABLE;
    }
  }
  return UNFETCHABLE;
}

function checkResponse(url: string, status: number, body: Buffer): MetadataResult {
  if (status >= 300 && status < 400) return { problem: `The client's metadata document URL redirects (status ${status}); redirects are not followed.` };
  if (status !== 200) return { problem: `The client's metadata document URL answered status ${status}.` };
  let document: unknown;
  try {
    document = JSON.parse(body.toString('utf8'));
  } catch {
    return { problem: "The client's metadata document is not JSON." };
  }
  return checkDocument(url, document);
}

/** The document's rules: client_id equal to the URL, valid redirect URIs, a public client. */
export function checkDocument(url: string, document: unknown): MetadataResult {
  if (!document || typeof document !== 'object' || Array.isArray(document)) return { problem: "The client's metadata document is not a JSON object." };
  const doc = document as Record<string, unknown>;
  if (doc.client_id !== url) return { problem: "The client's metadata document names a different client_id than its URL." };
  const method = doc.token_endpoint_auth_method;
  if (method !== undefined && method !== 'none') return { problem: "The client's metadata document must declare token_endpoint_auth_method none (public client)." };
  if (doc.client_secret !== undefined || doc.client_secret_expires_at !== undefined) return { problem: "The client's metadata document must not contain a client secret." };
  const uris = doc.redirect_uris;
  if (!Array.isArray(uris) || uris.length === 0) return { problem: "The client's metadata document lists no redirect_uris." };
  for (const uri of uris) {
    const problem = redirectUriProblem(uri);
    if (problem) return { problem: `A redirect URI in the client's metadata document ${problem}.` };
  }
  const grantTypes = doc.grant_types;
  if (grantTypes !== undefined && (!Array.isArray(grantTypes) || !grantTypes.includes('authorization_code'))) {
    return { problem: "The client's metadata document's grant_types must include authorization_code." };
  }
  const responseTypes = doc.response_types;
  if (responseTypes !== undefined && (!Array.isArray(responseTypes) || !responseTypes.includes('code'))) {
    return { problem: "The client's metadata document's response_types must include code." };
  }
  const name = doc.client_name;
  if (name !== undefined && (typeof name !== 'string' || name.length > MAX_CLIENT_NAME)) {
    return { problem: `The client's metadata document's client_name must be a string of at most ${MAX_CLIENT_NAME} characters.` };
  }
  // The name is stored with every code and connection: one PostgreSQL cannot store makes the document invalid.
  if (typeof name === 'string' && !isStorable(name)) return { problem: `The client's metadata document's client_name ${UNSTORABLE}.` };
  return {
    client: {
      clientId: url,
      clientName: typeof name === 'string' ? name : '',
      // Display-only links: an unusable one is dropped rather than failing the client.
      clientUri: displayUrl(doc.client_uri),
      logoUri: displayUrl(doc.logo_uri),
      redirectUris: uris as string[],
    },
  };
}

function displayUrl(value: unknown): string {
  return typeof value === 'string' && httpsUrlProblem(value) === null ? value : '';
}

/** Cache-Control max-age clamped to 1 min..1 h; 10 min when absent; the minimum for no-store / no-cache. */
export function cacheSeconds(headers: IncomingHttpHeaders): number {
  const header = headers['cache-control'];
  const value = (Array.isArray(header) ? header.join(',') : header ?? '').toLowerCase();
  if (/(?:^|[,\s])(?:no-store|no-cache)(?:$|[,\s=])/.test(value)) return METADATA_CACHE_MIN_SECONDS;
  const match = /(?:^|[,\s])max-age\s*=\s*"?(\d+)"?/.exec(value);
  const seconds = match ? Number(match[1]) : METADATA_CACHE_DEFAULT_SECONDS;
  return Math.min(Math.max(seconds, METADATA_CACHE_MIN_SECONDS), METADATA_CACHE_MAX_SECONDS);
}

const perDeps = new WeakMap<IdentityDeps, MetadataDocuments>();

/** The fetcher of a service instance, built on first use from its configuration. */
export function metadataDocumentsOf(deps: IdentityDeps): MetadataDocuments {
  let documents = perDeps.get(deps);
  if (!documents) {
    const env = deps.config.env;
    const ca = extraCa(deps, env.OUTBOUND_EXTRA_CA_FILE);
    documents = new MetadataDocuments({ allowedNetworks: parseAllowedNetworks(env.ALLOWED_INTERNAL_NETWORKS), ...(ca ? { ca } : {}) });
    perDeps.set(deps, documents);
  }
  return documents;
}

/**
 * The system trust store plus OUTBOUND_EXTRA_CA_FILE's certificates (undici's `ca` replaces the store, so both
 * are given). Undefined when no extra file is configured.
 */
function extraCa(deps: IdentityDeps, file: string | undefined): string | undefined {
  if (!file) return undefined;
  try {
    return [...rootCertificates, readFileSync(file, 'utf8')].join('\n');
  } catch (error) {
    deps.logger.error({ file, err: (error as Error).message }, 'OUTBOUND_EXTRA_CA_FILE could not be read; using the system trust store only');
    return undefined;
  }
}
