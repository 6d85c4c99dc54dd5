import { hash } from 'node:crypto';

interface Entry<T> {
  value: T;
  generation: string | null;
  expiresAt: number;
}

/**
 * Remembers, in this process only, answers about a credential (who it is; whether it may use a gateway), so
 * a request does not cost calls to other services. An entry is used only while the shared auth generation
 * (runtime cache/auth-generation.ts) is the one it was stored under, never past the credential's own expiry,
 * and for at most `ttlMs` even then (a bound if a generation change is ever lost). Credentials are held only
 * as SHA-256 hashes, never in clear.
 */
export class AuthenticationCache<T> {
  private readonly entries = new Map<string, Entry<T>>();

  constructor(private readonly options: { ttlMs: number; maxEntries: number }) {}

  static keyOf(credential: string, scope: string): string {
    // One-shot hash: the same digest as hashing the parts in turn, at half the cost (it runs on every request).
    return hash('sha256', `${credential}\0${scope}`, 'base64url');
  }

  get(key: string, generation: string | null, now = Date.now()): T | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (entry.generation !== generation || entry.expiresAt <= now) {
      this.entries.delete(key);
      return undefined;
    }
    return entry.value;
  }

  /** `credentialExpiresAt` (ISO) caps the entry's life at the credential's own end (a session's TTL, a token's expiry). */
  set(key: string, value: T, generation: string | null, credentialExpiresAt?: string, now = Date.now()): void {
    if (this.entries.size >= this.options.maxEntries) {
      // Maps iterate in insertion order: dropping the oldest entry keeps memory bounded.
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
    const credentialEnd = credentialExpiresAt ? Date.parse(credentialExpiresAt) : Infinity;
    this.entries.set(key, { value, generation, expiresAt: Math.min(now + this.options.ttlMs, credentialEnd) });
  }
}
