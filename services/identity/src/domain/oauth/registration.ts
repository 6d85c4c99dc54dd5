import type { RegisterClientRequest, RegisterClientResponse } from '@platform/proto/gen/platform/identity/v1/oauth';
import { randomToken } from '@platform/runtime';
import type { IdentityDeps } from '../../deps';
import { insertRegisteredClient } from '../../store/oauth-clients-store';
import { anonymousActor, writeOAuthAudit } from './audit';
import { oauthError } from './errors';
import { MAX_CLIENT_NAME, MAX_REDIRECT_URIS, MAX_REGISTRATION_BYTES, MAX_URI_LENGTH, UNUSED_REGISTRATION_TTL_SECONDS } from './limits';
import { httpsUrlProblem, isStorable, redirectUriProblem, UNSTORABLE } from './validation';

const GRANT_TYPES = ['authorization_code', 'refresh_token'];

interface ClientMetadata {
  redirectUris: string[];
  clientName: string;
  clientUri: string;
  logoUri: string;
  grantTypes: string[];
  responseTypes: string[];
}

type Parsed = { metadata: ClientMetadata; error?: undefined } | { metadata?: undefined; error: RegisterClientResponse['error'] };

const invalidMetadata = (description: string): Parsed => ({ error: oauthError('invalid_client_metadata', description) });
const invalidRedirect = (description: string): Parsed => ({ error: oauthError('invalid_redirect_uri', description) });

/**
 * RFC 7591 §2 for public clients only; members this server does not use are ignored. Every member it keeps is
 * checked to be storable (isStorable): a NUL or an unpaired surrogate is invalid metadata (§3.2.2), not a 500.
 */
function parseMetadata(json: string): Parsed {
  if (Buffer.byteLength(json, 'utf8') > MAX_REGISTRATION_BYTES) return invalidMetadata(`The registration request exceeds ${MAX_REGISTRATION_BYTES / 1024} KiB.`);
  let body: unknown;
  try {
    body = JSON.parse(json);
  } catch {
    return invalidMetadata('The registration request is not valid JSON.');
  }
  if (!body || typeof body !== 'object' || Array.isArray(body)) return invalidMetadata('The registration request must be a JSON object.');
  const doc = body as Record<string, unknown>;

  const uris = doc.redirect_uris;
  if (!Array.isArray(uris) || uris.length === 0) return invalidRedirect('redirect_uris is required: a non-empty array of URIs.');
  if (uris.length > MAX_REDIRECT_URIS) return invalidRedirect(`redirect_uris may list at most ${MAX_REDIRECT_URIS} URIs.`);
  for (const [index, uri] of uris.entries()) {
    const problem = redirectUriProblem(uri);
    if (problem) return invalidRedirect(`redirect_uris[${index}] ${problem}.`);
  }

  const method = doc.token_endpoint_auth_method;
  if (method !== undefined && method !== 'none') {
    return invalidMetadata('Only public clients can register: token_endpoint_auth_method must be none.');
  }
  const grantTypes = doc.grant_types ?? GRANT_TYPES;
  if (!Array.isArray(grantTypes) || grantTypes.length === 0 || !grantTypes.every((g) => typeof g === 'string' && GRANT_TYPES.includes(g))) {
    return invalidMetadata('grant_types may list only authorization_code and refresh_token.');
  }
  if (!grantTypes.includes('authorization_code')) return invalidMetadata('grant_types must include authorization_code.');
  const responseTypes = doc.response_types ?? ['code'];
  if (!Array.isArray(responseTypes) || responseTypes.length !== 1 || responseTypes[0] !== 'code') {
    return invalidMetadata('response_types must be ["code"].');
  }
  const name = doc.client_name ?? '';
  if (typeof name !== 'string' || name.length > MAX_CLIENT_NAME) return invalidMetadata(`client_name must be a string of at most ${MAX_CLIENT_NAME} characters.`);
  if (!isStorable(name)) return invalidMetadata(`client_name ${UNSTORABLE}.`);
  const links: Record<'client_uri' | 'logo_uri', string> = { client_uri: '', logo_uri: '' };
  for (const member of ['client_uri', 'logo_uri'] as const) {
    const value = doc[member];
    if (value === undefined) continue;
    if (typeof value !== 'string') return invalidMetadata(`${member} must be an https URL of at most ${MAX_URI_LENGTH} characters.`);
    const problem = httpsUrlProblem(value);
    if (problem) return invalidMetadata(`${member} ${problem}.`);
    links[member] = value;
  }
  return {
    metadata: {
      redirectUris: [...new Set(uris as string[])],
      clientName: name.trim(),
      clientUri: links.client_uri,
      logoUri: links.logo_uri,
      grantTypes: [...new Set(grantTypes as string[])],
      responseTypes: ['code'],
    },
  };
}

/**
 * Dynamic client registration (RFC 7591): public clients only, ids `svccl_…`; an unused registration expires
 * after 30 days. The response echoes the registered metadata and never carries a secret.
 */
export async function registerClient(deps: IdentityDeps, request: RegisterClientRequest): Promise<RegisterClientResponse> {
  const parsed = parseMetadata(request.metadataJson);
  if (!parsed.metadata) return { responseJson: '', error: parsed.error };
  const metadata = parsed.metadata;
  const id = `svccl_${randomToken(24)}`;
  const row = await deps.db.transaction(async (tx) => {
    const inserted = await insertRegisteredClient(tx, { id, ...metadata, unusedTtlSeconds: UNUSED_REGISTRATION_TTL_SECONDS });
    await writeOAuthAudit(tx, {
      action: 'oauth.client_register',
      actor: anonymousActor,
      requestId: request.requestId,
      clientIp: request.clientIp,
      target: { type: 'oauth_client', id, label: metadata.clientName || id },
      metadata: {
        clientId: id,
        clientName: metadata.clientName,
        redirectHosts: [...new Set(metadata.redirectUris.map((uri) => new URL(uri).host))],
      },
    });
    return inserted;
  });
  const response: Record<string, unknown> = {
    client_id: row.id,
    client_id_issued_at: Math.floor(row.registered_at.getTime() / 1000),
    redirect_uris: row.redirect_uris,
    ...(row.client_name ? { client_name: row.client_name } : {}),
    ...(row.client_uri ? { client_uri: row.client_uri } : {}),
    ...(row.logo_uri ? { logo_uri: row.logo_uri } : {}),
    token_endpoint_auth_method: 'none',
    grant_types: row.grant_types,
    response_types: row.response_types,
  };
  return { responseJson: JSON.stringify(response) };
}
