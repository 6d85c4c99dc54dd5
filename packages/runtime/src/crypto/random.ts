import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** A random token of `bytes` bytes from the CSPRNG, base64url-encoded (32 bytes = 256 bits by default). */
export function randomToken(bytes = 32): string {
  if (!Number.isSafeInteger(bytes) || bytes < 1) throw new RangeError(`token size must be a positive integer, got ${bytes}`);
  return randomBytes(bytes).toString('base64url');
}

/**
 * Equality whose time does not depend on where the inputs differ, nor on their lengths: both sides are hashed
 * to 32 bytes first (timingSafeEqual alone throws on, and so reveals, a length mismatch).
 */
export function constantTimeEqual(a: string | Buffer, b: string | Buffer): boolean {
  const hashA = createHash('sha256').update(a).digest();
  const hashB = createHash('sha256').update(b).digest();
  return timingSafeEqual(hashA, hashB);
}
