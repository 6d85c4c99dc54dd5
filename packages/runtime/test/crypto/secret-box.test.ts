import { randomBytes } from 'node:crypto';
import { CryptoError } from '../../src/crypto/errors';
import { parseKeyRing } from '../../src/crypto/key-ring';
import { SecretBox } from '../../src/crypto/secret-box';

const oldKey = randomBytes(32).toString('base64');
const newKey = randomBytes(32).toString('base64');

function flipByteOfBody(ciphertext: string, index: number): string {
  const parts = ciphertext.split('.');
  const body = Buffer.from(parts[3]!, 'base64url');
  body[index] = body[index]! ^ 0x01;
  parts[3] = body.toString('base64url');
  return parts.join('.');
}

function cryptoErrorOf(fn: () => unknown): CryptoError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(CryptoError);
    return error as CryptoError;
  }
  throw new Error('expected a CryptoError');
}

describe('SecretBox', () => {
  const box = SecretBox.fromKeyRing(`k1:${oldKey}`);

  it('round-trips text, with and without associated data', () => {
    const secret = 'sk-live-ünïcode-🔑';
    expect(box.decrypt(box.encrypt(secret))).toBe(secret);
    expect(box.decrypt(box.encrypt(secret, 'row-42'), 'row-42')).toBe(secret);
    expect(box.decrypt(box.encrypt(''))).toBe('');
  });

  it('writes v1.<kid>.<iv>.<body> with a fresh 12-byte IV each time', () => {
    const a = box.encrypt('same');
    const b = box.encrypt('same');
    expect(a).not.toBe(b);
    const [version, kid, iv, body] = a.split('.');
    expect(version).toBe('v1');
    expect(kid).toBe('k1');
    expect(Buffer.from(iv!, 'base64url')).toHaveLength(12);
    expect(Buffer.from(body!, 'base64url')).toHaveLength('same'.length + 16);
    expect(a).not.toContain('same');
  });

  it('detects a flipped byte in the ciphertext or in the tag', () => {
    const ciphertext = box.encrypt('do not touch');
    for (const index of [0, 'do not touch'.length + 3]) {
      expect(cryptoErrorOf(() => box.decrypt(flipByteOfBody(ciphertext, index))).reason).toBe('authentication_failed');
    }
  });

  it('detects a changed IV', () => {
    const parts = box.encrypt('x').split('.');
    const iv = Buffer.from(parts[2]!, 'base64url');
    iv[0] = iv[0]! ^ 0x80;
    parts[2] = iv.toString('base64url');
    expect(cryptoErrorOf(() => box.decrypt(parts.join('.'))).reason).toBe('authentication_failed');
  });

  it('refuses a ciphertext under different or missing associated data', () => {
    const ciphertext = box.encrypt('bound to row 1', 'row-1');
    expect(cryptoErrorOf(() => box.decrypt(ciphertext, 'row-2')).reason).toBe('authentication_failed');
    expect(cryptoErrorOf(() => box.decrypt(ciphertext)).reason).toBe('authentication_failed');
  });

  it('refuses a ciphertext made with another key under the same id', () => {
    const other = SecretBox.fromKeyRing(`k1:${newKey}`);
    expect(cryptoErrorOf(() => other.decrypt(box.encrypt('x'))).reason).toBe('authentication_failed');
  });

  it('refuses malformed ciphertexts and unknown key ids', () => {
    for (const bad of ['', 'plain text', 'v2.k1.AAAA.AAAA', 'v1.k1.short.AAAAAAAAAAAAAAAAAAAAAA', 'v1.k1.!!.??']) {
      expect(cryptoErrorOf(() => box.decrypt(bad)).reason).toBe('malformed_ciphertext');
    }
    const foreign = SecretBox.fromKeyRing(`k9:${newKey}`).encrypt('x');
    expect(cryptoErrorOf(() => box.decrypt(foreign)).reason).toBe('unknown_key');
  });

  describe('rotation', () => {
    const before = SecretBox.fromKeyRing(`k1:${oldKey}`);
    const after = SecretBox.fromKeyRing(`k2:${newKey},k1:${oldKey}`);

    it('decrypts ciphertexts of the old key and encrypts with the first key', () => {
      const old = before.encrypt('legacy', 'row-7');
      expect(after.decrypt(old, 'row-7')).toBe('legacy');
      const fresh = after.encrypt('current', 'row-7');
      expect(fresh.split('.')[1]).toBe('k2');
      expect(after.activeKeyId).toBe('k2');
      expect(() => before.decrypt(fresh, 'row-7')).toThrow(CryptoError);
    });

    it('says which ciphertexts need re-encrypting', () => {
      const old = before.encrypt('legacy');
      expect(after.needsRotation(old)).toBe(true);
      expect(after.needsRotation(after.encrypt('current'))).toBe(false);
      expect(before.needsRotation(old)).toBe(false);
      expect(() => after.needsRotation('garbage')).toThrow(CryptoError);
    });
  });
});

describe('parseKeyRing', () => {
  it('reads kid:key pairs, the first being active', () => {
    const ring = parseKeyRing(`k2:${newKey}, k1:${oldKey}`);
    expect(ring.activeKeyId).toBe('k2');
    expect([...ring.keys.keys()]).toEqual(['k2', 'k1']);
    expect(ring.keys.get('k1')).toEqual(Buffer.from(oldKey, 'base64'));
  });

  it('takes a bare key as k1, and accepts base64url and unpadded base64', () => {
    expect(parseKeyRing(oldKey).activeKeyId).toBe('k1');
    const raw = randomBytes(32);
    expect(parseKeyRing(`a:${raw.toString('base64url')}`).keys.get('a')).toEqual(raw);
    expect(parseKeyRing(`b:${raw.toString('base64').replace(/=+$/, '')}`).keys.get('b')).toEqual(raw);
  });

  it('refuses malformed rings without repeating any of the value', () => {
    const short = randomBytes(16).toString('base64');
    const long = randomBytes(48).toString('base64');
    const cases: Array<[string, string]> = [
      ['', 'empty'],
      [`k1:${oldKey},`, 'empty'],
      [`k1:${short}`, '16 bytes'],
      [`k1:${long}`, '48 bytes'],
      [`k1:${oldKey.slice(0, 20)}*${oldKey.slice(21)}`, 'not valid base64'],
      [`k1:${oldKey},k1:${newKey}`, 'repeats'],
      [`bad.kid:${oldKey}`, 'invalid key id'],
      [`:${oldKey}`, 'invalid key id'],
    ];
    for (const [value, expected] of cases) {
      const error = cryptoErrorOf(() => parseKeyRing(value));
      expect(error.reason).toBe('malformed_key_ring');
      expect(error.message).toContain(expected);
      expect(error.message).toContain('ENCRYPTION_KEY');
      for (const secret of [oldKey, newKey, short, long, oldKey.slice(0, 20), oldKey.slice(21)]) {
        expect(error.message).not.toContain(secret);
      }
    }
  });
});
