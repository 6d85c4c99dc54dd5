import { randomBytes } from 'node:crypto';
import type { Digester } from '@platform/runtime';

/** Lowercase RFC 4648 base32 without padding: no `_`, so `rag_<id>_<secret>` splits unambiguously. */
function base32(bytes: Buffer): string {
  const alphabet = 'abcdefghijklmnopqrstuvwxyz234567';
  let bits = 0;
  let value = 0;
  let out = '';
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += alphabet[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += alphabet[(value << (5 - bits)) & 31];
  return out;
}

const API_KEY_PATTERN = /^rag_([a-z2-7]{16})_([a-z2-7]{32})$/;

/** A new API key: a public id (80 bits, the lookup key) and a secret (160 bits). */
export function newApiKey(): { id: string; key: string; hint: string } {
  const id = base32(randomBytes(10));
  const secret = base32(randomBytes(20));
  return { id, key: `rag_${id}_${secret}`, hint: secret.slice(-4) };
}

/** The id of a well-formed API key, or null: nothing is looked up for a malformed one. */
export function apiKeyId(key: string): string | null {
  return API_KEY_PATTERN.exec(key)?.[1] ?? null;
}

/** A new browser session token (the cookie value); only its digest is stored. */
export function newSessionToken(): string {
  return randomBytes(32).toString('base64url');
}

/** The CSRF token of a session: derived, so it needs no storage and cannot be guessed without the pepper. */
export function csrfTokenFor(digester: Digester, sessionId: string): string {
  return digester.digest(`csrf:${sessionId}`);
}
