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
/** Beyond this many remembered tokens, expired ones are swept (bounds memory with many people and servers). */
const SWEEP_AT = 10_000;

interface Remembered {
  token: Promise<string>;
  /** Epoch ms after which a new token is signed. */
  renewAt: number;
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
  const remembered = new Map<string, Remembered>();

  const sweep = (now: number) => {
    for (const [key, entry] of remembered) if (entry.renewAt <= now) remembered.delete(key);
  };

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
      const hit = remembered.get(key);
      if (hit && hit.renewAt > now) return hit.token;
      if (remembered.size >= SWEEP_AT) sweep(now);
      const token = sign(subject);
      remembered.set(key, { token, renewAt: now + (IDENTITY_TOKEN_TTL_SECONDS - REUSE_MARGIN_SECONDS) * 1000 });
      // A failed signing is not remembered: the next call tries again.
      token.catch(() => {
        if (remembered.get(key)?.token === token) remembered.delete(key);
      });
      return token;
    },
  };
}
