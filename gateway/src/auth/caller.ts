import type { RequestContext } from '@platform/proto/gen/platform/common/v1/common';
import { ActorKind } from '@platform/proto/gen/platform/common/v1/common';
import type { Principal, Team } from '@platform/proto/gen/platform/identity/v1/identity';
import { AppError } from '@platform/runtime';
import type { CredentialKind } from './policy';
import type { PlatformRoleName, TeamRoleName } from './roles';

/** The caller of a `/v1` request as the edge's policy sees it (ctx.auth). */
export interface Caller {
  credential: CredentialKind;
  principal: Principal;
  personId: string | null;
  platformRole: PlatformRoleName | null;
  scopes: string[];
  apiKeyTeamId: string | null;
  /** The addressed team and the caller's role in it, for routes with a `{team}`. */
  team: { team: Team; role: TeamRoleName | null; via: string } | null;
  /** The session's CSRF token (sessions only). */
  csrfToken: string | null;
  clientIp: string;
}

/** The caller of a route that is not anonymous (the policy has already admitted it). */
export function callerOf(ctx: { auth: unknown }): Caller {
  const caller = ctx.auth as Caller | null | undefined;
  if (!caller) throw AppError.unauthenticated();
  return caller;
}

/** The team a team route addresses (the policy has already resolved it). */
export function teamOf(ctx: { auth: unknown }): Team {
  const team = callerOf(ctx).team?.team;
  if (!team) throw AppError.notFound('Team');
  return team;
}

/** What services record about who asked and from where (audit entries). Never a credential. */
export function requestContextOf(ctx: { auth: unknown; requestId: string }): RequestContext {
  const caller = ctx.auth as Caller | null | undefined;
  const principal = caller?.principal;
  const viaApiKey = caller?.credential === 'api_key';
  return {
    requestId: ctx.requestId,
    clientIp: caller?.clientIp ?? '',
    viaKind: caller ? caller.credential : '',
    viaName: viaApiKey ? (principal?.apiKeyName ?? '') : '',
    actor: principal
      ? {
          kind: principal.serviceAccountId
            ? ActorKind.ACTOR_KIND_SERVICE_ACCOUNT
            : viaApiKey
              ? ActorKind.ACTOR_KIND_API_KEY
              : ActorKind.ACTOR_KIND_USER,
          userId: principal.personId,
          displayName: principal.serviceAccountName || principal.displayName,
          email: principal.email,
          apiKeyName: principal.apiKeyName,
          serviceAccountId: principal.serviceAccountId,
        }
      : { kind: ActorKind.ACTOR_KIND_SYSTEM, userId: '', displayName: '', email: '', apiKeyName: '', serviceAccountId: '' },
  };
}
