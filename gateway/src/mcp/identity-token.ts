import { randomUUID } from 'node:crypto';
import type { ServiceClients } from '@platform/runtime';
import type { EdgeSettings } from '../edge-deps';
import { identityKeySourceOf, keysTtlMsOf } from './identity-keys';
import { loadJose } from './jose';

/** Who an identity token speaks for, and to which server. */
export interface IdentitySubject {
  person: { id: string; email: string; displayName: string };
  team: { id: string; slug: string };
  gateway: { id: string; slug: string };
  /** The registered server: its URL is the audience; its id and owning team let it tell itself from a namesake. */
  server: { id: string; url: string; teamId: string };
}

export interface IdentityTokenSigner {
  /** A short-lived JWT for the upstream: the same one while it has more than a minute left. */
  tokenFor(subject: IdentitySubject): Promise<string>;
}

/** Identity tokens live 5 minutes; a remembered one is replaced a minute before it expires. */
export const IDENTITY_TOKEN_TTL_SECONDS = 300;
const REUSE_MARGIN_SECONDS = 60;
/** Below this many remembered tokens, none is swept. */
const SWEEP_AT = 10_000;

interface Remembered {
  token: Promise<string>;
  /** Epoch ms after which a new token is signed. */
  renewAt: number;
}

/**
 * The tokens a signer remembers, by subject, each until it is due for renewal. One whose subject asks again is
 * replaced then; the others are swept when a new one comes while the map holds `sweepAt` of them, and `sweepAt` is
 * then twice what the sweep left (never below `minSweepAt`). With many live tokens (many people and servers at once)
 * a sweep that leaves most of them is so not repeated at every new token, only once the map has doubled: each token
 * costs a constant number of sweep steps however many are remembered, and memory stays within about twice the live
 * tokens (or `minSweepAt`).
 */
export class RememberedTokens {
  private readonly entries = new Map<string, Remembered>();
  private sweepAt: number;

  constructor(private readonly minSweepAt = SWEEP_AT) {
    this.sweepAt = minSweepAt;
  }

  get size(): number {
    return this.entries.size;
  }

  /** The token remembered for `key`, unless it is due for renewal. */
  fresh(key: string, now: number): Promise<string> | undefined {
    const hit = this.entries.get(key);
    return hit && hit.renewAt > now ? hit.token : undefined;
  }

  remember(key: string, token: Promise<string>, renewAt: number, now: number): void {
    if (this.entries.size >= this.sweepAt) this.sweep(now);
    this.entries.set(key, { token, renewAt });
  }

  /** Forgets `token` (its signing failed, and is tried again next time), unless another took its place. */
  forget(key: string, token: Promise<string>): void {
    if (this.entries.get(key)?.token === token) this.entries.delete(key);
  }

  private sweep(now: number): void {
    for (const [key, entry] of this.entries) if (entry.renewAt <= now) this.entries.delete(key);
    this.sweepAt = Math.max(this.minSweepAt, 2 * this.entries.size);
  }
}

function keyOf(subject: IdentitySubject): string {
  const { person, team, gateway, server } = subject;
  return [person.id, person.email, person.displayName, team.id, team.slug, gateway.id, gateway.slug, server.id, server.url].join('\n');
}

/**
 * Signs the identity tokens the data plane sends to servers with `sendIdentity` (docs/oauth.md, Identity tokens):
 * ES256 with the identity service's current key (header kid), iss = APP_URL, aud = the server's URL, sub = the
 * person, with email, name, team and gateway claims and a jti. Keys and tokens are remembered, so the common case
 * on the hot path is one map lookup.
 */
export function createIdentityTokenSigner(
  deps: { clients: ServiceClients; settings: Pick<EdgeSettings, 'appUrl' | 'identityKeysCacheSeconds'> },
): IdentityTokenSigner {
  const keys = identityKeySourceOf(deps.clients, keysTtlMsOf(deps.settings));
  const remembered = new RememberedTokens();

  const sign = async (subject: IdentitySubject): Promise<string> => {
    const { signing } = await keys.get();
    const { SignJWT } = await loadJose();
    return new SignJWT({
      email: subject.person.email,
      name: subject.person.displayName,
      team_id: subject.team.id,
      team_slug: subject.team.slug,
      gateway_id: subject.gateway.id,
      gateway_slug: subject.gateway.slug,
      // Anyone may register a server at any URL: a verifier pins these, not only its URL (docs/oauth.md).
      server_id: subject.server.id,
      server_team_id: subject.server.teamId,
    })
      .setProtectedHeader({ alg: signing.alg, kid: signing.kid, typ: 'JWT' })
      .setIssuer(deps.settings.appUrl)
      .setAudience(subject.server.url)
      .setSubject(subject.person.id)
      .setJti(randomUUID())
      .setIssuedAt()
      .setExpirationTime(`${IDENTITY_TOKEN_TTL_SECONDS}s`)
      .sign(signing.key);
  };

  return {
    tokenFor(subject) {
      const now = Date.now();
      const key = keyOf(subject);
      const hit = remembered.fresh(key, now);
      if (hit) return hit;
      const token = sign(subject);
      remembered.remember(key, token, now + (IDENTITY_TOKEN_TTL_SECONDS - REUSE_MARGIN_SECONDS) * 1000, now);
      // A failed signing is not remembered: the next call tries again.
      token.catch(() => remembered.forget(key, token));
      return token;
    },
  };
}
