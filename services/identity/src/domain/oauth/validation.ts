import { createHash } from 'node:crypto';
import { constantTimeEqual, isLoopbackHost, storableText } from '@platform/runtime';
import { MAX_URI_LENGTH } from './limits';

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** Dynamic registrations' client ids. */
export const REGISTERED_CLIENT_ID = /^svccl_[A-Za-z0-9_-]{20,100}$/;
/** RFC 7636 §4.2: BASE64URL(SHA256(verifier)) is always 43 characters. */
export const S256_CHALLENGE = /^[A-Za-z0-9_-]{43}$/;
/** RFC 7636 §4.1: 43 to 128 characters of the unreserved set. */
export const CODE_VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/;

/**
 * Whether PostgreSQL can store `value` as sent: no NUL (U+0000) and no unpaired surrogate, the two things
 * `storableText` would have to change. Client metadata is refused rather than altered: a redirect URI must stay
 * byte for byte what the client sends back, and a name it did not choose must not be shown on a consent page.
 */
export function isStorable(value: string): boolean {
  return storableText(value) === value;
}

/** Why a text member cannot be stored, or null (see isStorable). */
export const UNSTORABLE = 'must not contain NUL characters or unpaired surrogates';

function parseAbsolute(value: string): URL | null {
  try {
    return new URL(value);
  } catch {
    return null;
  }
}

/**
 * Why a URI's text is not what the URL parser will read, or null. The parser is lenient where RFC 3986 is not: it
 * reads a backslash as "/", drops tabs and newlines, and finds a host where none is written ("https:///cb" and
 * "https:cb" both become host "cb"). A URI is compared and shown as written, so what is written must name a host.
 */
function writtenFormProblem(value: string): string | null {
  if (/[\s\\\p{Cc}]/u.test(value)) return 'must not contain whitespace, control characters or backslashes';
  const authority = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/([^/?#]*)/.exec(value)?.[1];
  if (!authority) return 'must name a host after "//" (scheme://host/…)';
  return null;
}

/**
 * Why a redirect URI cannot be registered, or null when it can (§4.1.2): https, or http on a loopback host with
 * any port; a host as written; no fragment (RFC 6749 §3.1.2), no credentials.
 */
export function redirectUriProblem(value: unknown): string | null {
  if (typeof value !== 'string' || value === '') return 'must be a non-empty string';
  if (value.length > MAX_URI_LENGTH) return `must be at most ${MAX_URI_LENGTH} characters`;
  if (!isStorable(value)) return UNSTORABLE;
  if (value.includes('#')) return 'must not contain a fragment';
  const url = parseAbsolute(value);
  if (!url) return 'must be an absolute URL';
  const written = writtenFormProblem(value);
  if (written) return written;
  if (url.username !== '' || url.password !== '') return 'must not contain credentials';
  if (url.protocol === 'https:') return url.hostname === '' ? 'must name a host' : null;
  if (url.protocol === 'http:') return isLoopbackHost(url.hostname) ? null : 'http is allowed only on a loopback host (127.0.0.1, [::1], localhost)';
  return 'must use https (or http on a loopback host)';
}

/**
 * Why a string cannot be an https link kept for a client (client_uri, logo_uri), or null: https, a host as
 * written, no credentials, no fragment, no dot path segments.
 */
export function httpsUrlProblem(value: string): string | null {
  if (value.length > MAX_URI_LENGTH) return `must be at most ${MAX_URI_LENGTH} characters`;
  if (!isStorable(value)) return UNSTORABLE;
  const url = parseAbsolute(value);
  if (!url || url.protocol !== 'https:') return 'must be an https URL';
  const written = writtenFormProblem(value);
  if (written) return written;
  if (url.hostname === '') return 'must name a host';
  if (url.username !== '' || url.password !== '') return 'must not contain credentials';
  if (value.includes('#')) return 'must not contain a fragment';
  const path = value.replace(/^https:\/\/[^/?#]*/i, '').replace(/[?#].*$/, '');
  if (path.split('/').some((segment) => segment === '.' || segment === '..')) return 'must not contain . or .. path segments';
  return null;
}

/**
 * Why a string cannot be a client ID metadata document URL, or null (draft-ietf-oauth-client-id-metadata-document,
 * "Client Identifier URL"): an https link as above that also "MUST contain a path component". "/" is a path (the
 * draft only advises against it); none at all ("https://host", "https://host?x") is not, though the URL parser
 * would fetch "/" for it, so the raw value is checked.
 */
export function clientIdUrlProblem(value: string): string | null {
  const problem = httpsUrlProblem(value);
  if (problem) return problem;
  if (!/^https:\/\/[^/?#]*\//i.test(value)) return 'must contain a path (https://host/path)';
  return null;
}

/** RFC 7636 S256: BASE64URL(SHA256(ASCII(verifier))) equals the challenge (compared in constant time). */
export function pkceMatches(verifier: string, challenge: string): boolean {
  const computed = createHash('sha256').update(verifier, 'ascii').digest('base64url');
  return constantTimeEqual(computed, challenge);
}
