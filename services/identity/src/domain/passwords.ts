import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

/**
 * Password hashing with scrypt (RFC 7914) from Node's crypto: no native add-on to install. Stored as
 * `scrypt$<log2 N>$<r>$<p>$<salt b64>$<hash b64>` so parameters can be raised later without breaking old hashes.
 */
const DEFAULT = { log2N: 15, r: 8, p: 1, keyLength: 32 };

function derive(password: string, salt: Buffer, log2N: number, r: number, p: number, keyLength: number): Promise<Buffer> {
  const options: ScryptOptions = { N: 2 ** log2N, r, p, maxmem: 256 * 2 ** log2N * r };
  return new Promise((resolve, reject) =>
    scrypt(password.normalize('NFKC'), salt, keyLength, options, (error, key) => (error ? reject(error) : resolve(key))),
  );
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const { log2N, r, p, keyLength } = DEFAULT;
  const hash = await derive(password, salt, log2N, r, p, keyLength);
  return ['scrypt', log2N, r, p, salt.toString('base64'), hash.toString('base64')].join('$');
}

/** A hash of a random password: verified against when no account matches, so timing does not reveal that. */
let decoyHash: Promise<string> | undefined;
export function decoyPasswordHash(): Promise<string> {
  decoyHash ??= hashPassword(randomBytes(16).toString('hex'));
  return decoyHash;
}

/** Constant-time check of `password` against a stored hash; false for any malformed hash. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, log2N, r, p, salt, hash] = stored.split('$');
  if (scheme !== 'scrypt' || !log2N || !r || !p || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64');
  const actual = await derive(password, Buffer.from(salt, 'base64'), Number(log2N), Number(r), Number(p), expected.length);
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

/** The rule new passwords must meet; returns the problem, or null. */
export function passwordProblem(password: string): string | null {
  if (password.length < 12) return 'must be at least 12 characters';
  if (password.length > 512) return 'must be at most 512 characters';
  return null;
}
