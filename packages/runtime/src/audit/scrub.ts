/** Field names whose values are secrets wherever they appear (compared case-insensitively, ignoring `_`/`-`). */
const SECRET_FIELDS = new Set([
  'password',
  'newpassword',
  'secret',
  'token',
  'apikey',
  'authvalue',
  'clientsecret',
  'accesstoken',
  'refreshtoken',
  'sessiontoken',
  'authorization',
  'cookie',
  'codeverifier',
  'privatekey',
]);

/** Credentials the platform issues, recognisable by their prefixes. */
const CREDENTIAL_PATTERN = /\b(?:rag|svcat|svcrt|pk)_[A-Za-z0-9]+_?[A-Za-z0-9_-]{8,}/g;

export const REDACTED = '[redacted]';

/** A deep copy of `value` with secret-named fields and credential-shaped strings replaced by `[redacted]`. */
export function scrubSecrets(value: unknown): unknown {
  if (typeof value === 'string') return value.replace(CREDENTIAL_PATTERN, REDACTED);
  if (Array.isArray(value)) return value.map(scrubSecrets);
  if (value && typeof value === 'object') {
    const copy: Record<string, unknown> = {};
    for (const [key, child] of Object.entries(value)) {
      copy[key] = SECRET_FIELDS.has(key.toLowerCase().replace(/[_-]/g, '')) ? REDACTED : scrubSecrets(child);
    }
    return copy;
  }
  return value;
}
