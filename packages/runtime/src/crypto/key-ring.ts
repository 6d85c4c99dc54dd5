import { decodeBase64Strict } from './base64';
import { CryptoError } from './errors';

export const KEY_BYTES = 32;
/** Key ids appear inside ciphertexts, whose parts are separated by dots. */
const KEY_ID = /^[A-Za-z0-9_-]{1,32}$/;
/** The id of a key given bare, without `kid:`. */
export const DEFAULT_KEY_ID = 'k1';

export interface KeyRing {
  /** The id of the key that encrypts: the first one listed. */
  activeKeyId: string;
  keys: ReadonlyMap<string, Buffer>;
}

/**
 * Parses ENCRYPTION_KEY: `kid1:base64key1,kid2:base64key2`. The first key encrypts; every key decrypts, so
 * rotating means putting a new key first and keeping the old ones until their ciphertexts are re-encrypted.
 * A bare base64 value is the key `k1`. Each key is exactly 32 bytes (AES-256). Errors name the entry by position
 * and never repeat any of the value, since a typo could sit in key material.
 */
export function parseKeyRing(value: string, variable = 'ENCRYPTION_KEY'): KeyRing {
  const entries = value.split(',').map((entry) => entry.trim());
  const keys = new Map<string, Buffer>();
  entries.forEach((entry, index) => {
    const position = `${variable} entry ${index + 1} of ${entries.length}`;
    if (entry === '') throw new CryptoError('malformed_key_ring', `${position} is empty`);
    const separator = entry.indexOf(':');
    const keyId = separator === -1 ? DEFAULT_KEY_ID : entry.slice(0, separator).trim();
    const encoded = separator === -1 ? entry : entry.slice(separator + 1).trim();
    if (!KEY_ID.test(keyId)) {
      throw new CryptoError('malformed_key_ring', `${position} has an invalid key id: use 1-32 letters, digits, '_' or '-'`);
    }
    if (keys.has(keyId)) throw new CryptoError('malformed_key_ring', `${position} repeats a key id used before it`);
    const key = decodeBase64Strict(encoded);
    if (!key) throw new CryptoError('malformed_key_ring', `${position} is not valid base64`);
    if (key.length !== KEY_BYTES) {
      throw new CryptoError(
        'malformed_key_ring',
        `${position} decodes to ${key.length} bytes; AES-256 needs exactly ${KEY_BYTES} (generate one with: openssl rand -base64 32)`,
      );
    }
    keys.set(keyId, key);
  });
  return { activeKeyId: [...keys.keys()][0]!, keys };
}
