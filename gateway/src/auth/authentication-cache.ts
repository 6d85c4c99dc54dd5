import { createHash } from 'node:crypto';
import type { AuthenticateResponse } from '@platform/proto/gen/platform/identity/v1/identity';

interface Entry {
  response: AuthenticateResponse;
  generation: string | null;
  expiresAt: number;
}

/**
 * Remembers, in this process only, who a credential belongs to, so a read does not cost a call to the identity
 * service. An entry is used only while the shared auth generation (runtime cache/auth-generation.ts) is the one
 * it was stored under, and for at most `ttlMs` even then (a bound if a generation change is ever lost).
 * Credentials are held only as SHA-256 hashes, never in clear.
 */
export class AuthenticationCache {
  private readonly entries = new Map<string, Entry>();

  constructor(private readonly options: { ttlMs: number; maxEntries: number }) {}

  static keyOf(credential: string, teamRef: string): string {
    return createHash('sha256').update(credential).update('\0').update(teamRef).digest('base64url');
  }

  get(key: string, generation: string | null, now = Date.now()): AuthenticateResponse | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (entry.generation !== generation || entry.expiresAt <= now) {
      this.entries.delete(key);
      return undefined;
    }
    return entry.response;
  }

  set(key: string, response: AuthenticateResponse, generation: string | null, now = Date.now()): void {
    if (this.entries.size >= this.options.maxEntries) {
      // Maps iterate in insertion order: dropping the oldest entry keeps memory bounded.
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
    // Never past the credential's own end of life (a session's TTL, a key's expiry).
    const credentialEnd = response.principal?.expiresAt ? Date.parse(response.principal.expiresAt) : Infinity;
    this.entries.set(key, { response, generation, expiresAt: Math.min(now + this.options.ttlMs, credentialEnd) });
  }
}
