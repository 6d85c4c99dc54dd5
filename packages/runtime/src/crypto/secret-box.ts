import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { decodeBase64Strict } from './base64';
import { CryptoError } from './errors';
import { parseKeyRing, type KeyRing } from './key-ring';

const VERSION = 'v1';
const ALGORITHM = 'aes-256-gcm';
const IV_BYTES = 12;
const TAG_BYTES = 16;

/**
 * Authenticated encryption of secrets at rest (AES-256-GCM) with key ids for rotation.
 *
 * Ciphertext format: `v1.<kid>.<iv base64url>.<ciphertext+tag base64url>`, with a fresh random 12-byte IV per
 * message. Associated data (AAD), such as the owning row's id, is authenticated but not stored: a ciphertext
 * copied to another row fails to decrypt there. Pass the same AAD to `decrypt` as to `encrypt`.
 */
export class SecretBox {
  private readonly ring: KeyRing;

  constructor(ring: KeyRing) {
    if (!ring.keys.has(ring.activeKeyId)) throw new CryptoError('malformed_key_ring', 'the active key is not in the key ring');
    this.ring = ring;
  }

  /** From an ENCRYPTION_KEY value (see `parseKeyRing`). */
  static fromKeyRing(value: string): SecretBox {
    return new SecretBox(parseKeyRing(value));
  }

  get activeKeyId(): string {
    return this.ring.activeKeyId;
  }

  encrypt(plaintext: string, aad?: string): string {
    const keyId = this.ring.activeKeyId;
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv(ALGORITHM, this.ring.keys.get(keyId)!, iv, { authTagLength: TAG_BYTES });
    if (aad !== undefined) cipher.setAAD(Buffer.from(aad, 'utf8'));
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final(), cipher.getAuthTag()]);
    return `${VERSION}.${keyId}.${iv.toString('base64url')}.${body.toString('base64url')}`;
  }

  decrypt(ciphertext: string, aad?: string): string {
    const { keyId, iv, body } = parse(ciphertext);
    const key = this.ring.keys.get(keyId);
    if (!key) throw new CryptoError('unknown_key', `ciphertext was encrypted with key id "${keyId}", which is not in the key ring`);
    const decipher = createDecipheriv(ALGORITHM, key, iv, { authTagLength: TAG_BYTES });
    if (aad !== undefined) decipher.setAAD(Buffer.from(aad, 'utf8'));
    decipher.setAuthTag(body.subarray(body.length - TAG_BYTES));
    try {
      return Buffer.concat([decipher.update(body.subarray(0, body.length - TAG_BYTES)), decipher.final()]).toString('utf8');
    } catch {
      throw new CryptoError(
        'authentication_failed',
        'ciphertext failed authentication: it was altered, or the key or associated data differs from encryption',
      );
    }
  }

  /** True when the ciphertext was not encrypted by the active key and should be re-encrypted. */
  needsRotation(ciphertext: string): boolean {
    return parse(ciphertext).keyId !== this.ring.activeKeyId;
  }
}

function parse(ciphertext: string): { keyId: string; iv: Buffer; body: Buffer } {
  const parts = ciphertext.split('.');
  if (parts.length !== 4 || parts[0] !== VERSION) {
    throw new CryptoError('malformed_ciphertext', `not a ${VERSION} ciphertext`);
  }
  const [, keyId, ivText, bodyText] = parts as [string, string, string, string];
  const iv = decodeBase64Strict(ivText);
  const body = decodeBase64Strict(bodyText);
  if (!iv || iv.length !== IV_BYTES || !body || body.length < TAG_BYTES) {
    throw new CryptoError('malformed_ciphertext', `not a ${VERSION} ciphertext`);
  }
  return { keyId, iv, body };
}
