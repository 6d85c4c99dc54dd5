import { randomBytes } from 'node:crypto';
import { Digester, parsePepper } from '../../src/crypto/digester';
import { CryptoError } from '../../src/crypto/errors';
import { constantTimeEqual, randomToken } from '../../src/crypto/random';

describe('Digester', () => {
  const pepper = randomBytes(32).toString('base64');
  const digester = Digester.fromPepper(pepper);

  it('gives a stable base64url HMAC-SHA256 per pepper', () => {
    const digest = digester.digest('mcp_live_abc123');
    expect(digest).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(Digester.fromPepper(pepper).digest('mcp_live_abc123')).toBe(digest);
    expect(digester.digest('mcp_live_abc124')).not.toBe(digest);
    expect(Digester.fromPepper(randomBytes(32).toString('base64')).digest('mcp_live_abc123')).not.toBe(digest);
  });

  it('matches a value against its digest only', () => {
    const digest = digester.digest('key-1');
    expect(digester.matches('key-1', digest)).toBe(true);
    expect(digester.matches('key-2', digest)).toBe(false);
    expect(digester.matches('key-1', digest.slice(0, -1))).toBe(false);
    expect(digester.matches('key-1', '')).toBe(false);
  });

  it('reads the pepper as base64 when it decodes to 32+ bytes, else as raw text of 32+ bytes', () => {
    const bytes = randomBytes(32);
    expect(parsePepper(bytes.toString('base64'))).toEqual(bytes);
    expect(parsePepper(bytes.toString('base64url'))).toEqual(bytes);
    const phrase = 'correct horse battery staple, a long passphrase!';
    expect(parsePepper(phrase)).toEqual(Buffer.from(phrase, 'utf8'));
  });

  it('refuses a short pepper without repeating it', () => {
    for (const short of ['tooshort', randomBytes(16).toString('base64')]) {
      let caught: unknown;
      try {
        parsePepper(short);
      } catch (error) {
        caught = error;
      }
      expect(caught).toBeInstanceOf(CryptoError);
      expect((caught as CryptoError).reason).toBe('malformed_pepper');
      expect((caught as CryptoError).message).toContain('API_KEY_PEPPER');
      expect((caught as CryptoError).message).not.toContain(short);
    }
  });
});

describe('randomToken and constantTimeEqual', () => {
  it('makes distinct base64url tokens of the requested size', () => {
    const token = randomToken(32);
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(Buffer.from(token, 'base64url')).toHaveLength(32);
    expect(randomToken(32)).not.toBe(token);
    expect(Buffer.from(randomToken(16), 'base64url')).toHaveLength(16);
    expect(() => randomToken(0)).toThrow(RangeError);
  });

  it('compares strings and buffers of any length', () => {
    expect(constantTimeEqual('abc', 'abc')).toBe(true);
    expect(constantTimeEqual('abc', 'abd')).toBe(false);
    expect(constantTimeEqual('abc', 'abcd')).toBe(false);
    expect(constantTimeEqual('', '')).toBe(true);
    expect(constantTimeEqual(Buffer.from('xyz'), 'xyz')).toBe(true);
  });
});
