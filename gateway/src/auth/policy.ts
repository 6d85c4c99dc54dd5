import { AppError } from '@platform/runtime';
import type { Caller } from './caller';
import type { PlatformRoleName, TeamRoleName } from './roles';

export type CredentialKind = 'session' | 'api_key';
export type Scope = 'query' | 'ingest' | 'manage';

/**
 * Who may call a route. Every `/v1` route declares one, and `authorize` below is the one place that decides;
 * `callers` is the same rule in words, published in the OpenAPI document and docs/api.md.
 */
export interface RoutePolicy {
  callers: string;
  /** Anyone, signed in or not. */
  anonymous?: boolean;
  /** Credentials accepted; sessions only unless listed. API keys are never accepted under /v1/admin or /v1/search. */
  credentials?: readonly CredentialKind[];
  /** Platform roles that may call (on a team route: act on any team). */
  platform?: readonly PlatformRoleName[];
  /** For routes with a `{team}`: the team roles that may call. */
  team?: readonly TeamRoleName[];
  /**
   * For routes with a `{team}` addressing the platform team (kind `platform`): platform roles that may call without
   * being its members. The platform team's resources (platform MCP servers) are managed by platform admins.
   */
  platformTeam?: readonly PlatformRoleName[];
  /** Team service keys (acting as the team, not as a person) may call this team route. */
  serviceKeys?: boolean;
  /** The API key scope required. */
  scope?: Scope;
}

/** Routes no API key may call, whatever a route's policy says (§5.1). */
export function refusesApiKeys(path: string): boolean {
  return path === '/v1/admin' || path.startsWith('/v1/admin/') || path === '/v1/search' || path.startsWith('/v1/search/');
}

/**
 * Decides whether `caller` may call a route with `policy`. Throws the error to answer with: 401 without a
 * caller, 404 when the caller cannot see the addressed team (its existence is not revealed), 403 otherwise.
 */
export function authorize(policy: RoutePolicy, caller: Caller | null, path: string, hasTeamParam: boolean): void {
  if (policy.anonymous) return;
  if (!caller) throw AppError.unauthenticated();
  if (caller.credential === 'api_key' && refusesApiKeys(path)) {
    throw new AppError('forbidden', 'API keys cannot be used for this route; sign in instead');
  }
  if (!(policy.credentials ?? ['session']).includes(caller.credential)) {
    throw new AppError('forbidden', caller.credential === 'api_key' ? 'API keys cannot be used for this route' : 'This route needs an API key');
  }
  if (policy.scope && caller.credential === 'api_key' && !caller.scopes.includes(policy.scope)) {
    throw new AppError('forbidden', `This API key lacks the "${policy.scope}" scope`);
  }
  const platformAllowed = caller.platformRole !== null && (policy.platform ?? []).includes(caller.platformRole);
  if (!hasTeamParam) {
    if (policy.platform && !platformAllowed) throw AppError.forbidden();
    return;
  }

  const access = caller.team;
  if (!access) throw AppError.notFound('Team');
  if (platformAllowed) return;
  if (access.team.kind === 'platform' && caller.platformRole !== null && (policy.platformTeam ?? []).includes(caller.platformRole)) return;
  if (caller.credential === 'api_key' && caller.apiKeyTeamId !== access.team.id) throw AppError.notFound('Team');
  if (access.via === 'service_key') {
    if (policy.serviceKeys) return;
    throw AppError.forbidden('Team service keys cannot be used for this route');
  }
  if (access.role === null) {
    // Platform staff (any platform role) may read every team, so a route their role does not allow is 403, not the
    // 404 that hides a team from someone who cannot see it.
    if (caller.platformRole !== null && caller.credential === 'session') throw AppError.forbidden();
    throw AppError.notFound('Team');
  }
  if (!(policy.team ?? []).includes(access.role)) throw AppError.forbidden();
}

/** Policies many team routes share. */
export const TEAM_MEMBERS_AND_PLATFORM_STAFF: RoutePolicy = {
  callers: 'team members; platform staff',
  team: ['owner', 'admin', 'editor', 'member'],
  platform: ['admin', 'auditor', 'staff'],
};

export const TEAM_OWNERS_AND_ADMINS: RoutePolicy = { callers: 'team owners and admins', team: ['owner', 'admin'] };

/** Managing MCP servers: a team's owners and admins; on the platform team (platform servers) platform admins too. */
export const MCP_SERVER_MANAGERS: RoutePolicy = {
  callers: 'team owners and admins; platform admins (platform team)',
  team: ['owner', 'admin'],
  platformTeam: ['admin'],
};
