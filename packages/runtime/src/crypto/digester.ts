import { createHmac } from 'node:crypto';
import { decodeBase64Strict } from './base64';
import { CryptoError } from './errors';
import { constantTimeEqual } from './random';

export const MIN_PEPPER_BYTES = 32;

/**
 * Reads API_KEY_PEPPER. The rule, in order:
 *  1. a value that is well-formed base64 or base64url AND decodes to at least 32 bytes is used decoded
 *     (what `openssl rand -base64 32` prints);
 *  2. otherwise the value's UTF-8 bytes are the pepper, and there must be at least 32 of them.
 * The rule is deterministic, so the same value always yields the same pepper.
 */
export function parsePepper(value: string, variable = 'API_KEY_PEPPER'): Buffer {
  const decoded = decodeBase64Strict(value);
  if (decoded && decoded.length >= MIN_PEPPER_BYTES) return decoded;
  const raw = Buffer.from(value, 'utf8');
  if (raw.length >= MIN_PEPPER_BYTES) return raw;
  throw new CryptoError(
    'malformed_pepper',
    `${variable} is too short: it needs at least ${MIN_PEPPER_BYTES} bytes (generate one with: openssl rand -base64 32)`,
  );
}

/**
 * Keyed digests (HMAC-SHA256 under the pepper) of values that are looked up but never read back, such as API
 * keys: a stolen table of digests is useless without the pepper, which lives outside the database.
 */
export class Digester {
  private readonly pepper: Buffer;

  constructor(pepper: Buffer) {
    if (pepper.length < MIN_PEPPER_BYTES) {
      throw new CryptoError('malformed_pepper', `the pepper needs at least ${MIN_PEPPER_BYTES} bytes`);
    }
    this.pepper = Buffer.from(pepper);
  }

  /** From an API_KEY_PEPPER value (see `parsePepper`). */
  static fromPepper(value: string): Digester {
    return new Digester(parsePepper(value));
  }

  /** The base64url HMAC-SHA256 of `value`; stable for a given pepper, so it can be stored and indexed. */
  digest(value: string): string {
    return createHmac('sha256', this.pepper).update(value, 'utf8').digest('base64url');
  }

  /** Whether `digest` is the digest of `value`, compared in constant time. */
  matches(value: string, digest: string): boolean {
    return constantTimeEqual(this.digest(value), digest);
  }
}
