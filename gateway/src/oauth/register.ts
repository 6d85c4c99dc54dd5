import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Express } from 'express';
import type { EdgeDeps } from '../edge-deps';
import { requestIdOf } from '../request-id';
import { mountPostEndpoint } from './endpoint';
import { hasMediaType, readBodyText } from './form-body';
import { sendNoStoreJson } from './no-store';
import { sendOAuthError } from './oauth-errors';

/** Registration metadata is small; 16 KiB is far above any real client's document. */
const REGISTER_LIMIT_BYTES = 16 * 1024;

/**
 * `POST /oauth/register` (RFC 7591): a JSON body, public clients only. The identity service validates the
 * metadata and answers the registration (201, echoing redirect_uris) or an RFC 7591 §3.2.2 error (400).
 */
export function mountRegister(app: Express, deps: EdgeDeps): void {
  mountPostEndpoint(app, deps, { path: '/oauth/register', endpoint: 'register', handler: (req, res, clientAddress) => register(deps, req, res, clientAddress) });
}

async function register(deps: EdgeDeps, req: IncomingMessage, res: ServerResponse, clientAddress: string): Promise<void> {
  if (!hasMediaType(req, 'application/json')) {
    req.resume();
    return sendOAuthError(res, 'invalid_client_metadata', 'The registration request must be application/json');
  }
  const text = await readBodyText(req, REGISTER_LIMIT_BYTES);
  if (text === null) return sendOAuthError(res, 'invalid_client_metadata', 'The registration request is too large');
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return sendOAuthError(res, 'invalid_client_metadata', 'The registration request is not valid JSON');
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    return sendOAuthError(res, 'invalid_client_metadata', 'The registration request must be a JSON object');
  }
  const result = await deps.clients.identity.registerClient({ metadataJson: text, clientIp: clientAddress, requestId: requestIdOf(res) });
  if (result.error?.error) return sendOAuthError(res, result.error.error, result.error.errorDescription);
  sendNoStoreJson(res, 201, result.responseJson);
}
