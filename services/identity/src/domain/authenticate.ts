import type { AuthenticateRequest, AuthenticateResponse, Principal, TeamAccess } from '@platform/proto/gen/platform/identity/v1/identity';
import { ApiKeyKind, PrincipalKind, PlatformRole } from '@platform/proto/gen/platform/identity/v1/identity';
import { AppError, type Queryable } from '@platform/runtime';
import type { IdentityDeps } from '../deps';
import { platformRoleOf, teamRoleOf, toTeam, type PersonRow, type RoleName } from '../store/mappers';
import { findTeamByRef, membershipRole } from '../store/teams-store';
import { apiKeyId, csrfTokenFor } from './credentials';
import { scopesAllowedFor } from './scopes';

const INVALID = () => AppError.unauthenticated('Invalid or expired credentials');

interface SessionRow extends Pick<PersonRow, 'email' | 'display_name' | 'platform_role'> {
  session_id: string;
  person_id: string;
  expires_at: Date;
}

interface ApiKeyRow {
  id: string;
  team_id: string;
  kind: 'personal' | 'service';
  person_id: string | null;
  service_account_id: string | null;
  name: string;
  scopes: string[];
  knowledge_base_ids: string[];
  agent_ids: string[];
  secret_digest: string;
  expires_at: Date | null;
  team_archived: boolean;
  person_email: string | null;
  person_display_name: string | null;
  person_active: boolean | null;
  person_role: RoleName | null;
  account_name: string | null;
  account_role: 'member' | 'editor' | null;
  account_enabled: boolean | null;
}

/**
 * Who a credential belongs to, checked afresh on every request: a session must be live and its person active;
 * an API key unrevoked, unexpired, its team not archived, its person still active and in the team, or its
 * service account enabled. With `teamRef`, also how the principal reaches that team.
 */
export async function authenticate(deps: IdentityDeps, request: AuthenticateRequest): Promise<AuthenticateResponse> {
  const credential = request.credential;
  if (!credential) throw INVALID();
  const { principal, csrfToken } =
    credential.$case === 'sessionToken'
      ? await authenticateSession(deps, credential.value)
      : { principal: await authenticateApiKey(deps, credential.value), csrfToken: '' };
  const teamAccess = request.teamRef ? await teamAccessOf(deps.db, principal, request.teamRef) : undefined;
  return { principal, csrfToken, ...(teamAccess ? { teamAccess } : {}) };
}

async function authenticateSession(deps: IdentityDeps, token: string): Promise<{ principal: Principal; csrfToken: string }> {
  const { rows } = await deps.db.query<SessionRow>(
    `SELECT s.id AS session_id, s.expires_at, p.id AS person_id, p.email, p.display_name, p.platform_role
       FROM identity.sessions s JOIN identity.people p ON p.id = s.person_id
      WHERE s.token_digest = $1 AND s.ended_at IS NULL AND s.expires_at > now() AND p.status = 'active'`,
    [deps.secrets.digester.digest(token)],
  );
  const row = rows[0];
  if (!row) throw INVALID();
  // Bounded write: last_seen_at moves at most once a minute per session.
  void deps.db
    .query(`UPDATE identity.sessions SET last_seen_at = now() WHERE id = $1 AND last_seen_at < now() - interval '1 minute'`, [row.session_id])
    .catch((error: unknown) => deps.logger.warn({ err: error }, 'could not record session activity'));
  return {
    principal: {
      ...emptyPrincipal(),
      kind: PrincipalKind.PRINCIPAL_KIND_SESSION,
      personId: row.person_id,
      email: row.email,
      displayName: row.display_name,
      platformRole: platformRoleOf(row.platform_role),
      sessionId: row.session_id,
      expiresAt: row.expires_at.toISOString(),
    },
    csrfToken: csrfTokenFor(deps.secrets.digester, row.session_id),
  };
}

async function authenticateApiKey(deps: IdentityDeps, key: string): Promise<Principal> {
  const id = apiKeyId(key);
  if (!id) throw INVALID();
  const { rows } = await deps.db.query<ApiKeyRow>(
    `SELECT k.id, k.team_id, k.kind, k.person_id, k.service_account_id, k.name, k.scopes,
            k.knowledge_base_ids::text[] AS knowledge_base_ids, k.agent_ids::text[] AS agent_ids, k.secret_digest, k.expires_at,
            t.archived_at IS NOT NULL AS team_archived,
            p.email AS person_email, p.display_name AS person_display_name, p.status = 'active' AS person_active,
            m.role AS person_role,
            sa.name AS account_name, sa.role AS account_role, sa.enabled AS account_enabled
       FROM identity.api_keys k
       JOIN identity.teams t ON t.id = k.team_id
       LEFT JOIN identity.people p ON p.id = k.person_id
       LEFT JOIN identity.memberships m ON m.team_id = k.team_id AND m.person_id = k.person_id
       LEFT JOIN identity.service_accounts sa ON sa.id = k.service_account_id
      WHERE k.id = $1 AND k.revoked_at IS NULL AND (k.expires_at IS NULL OR k.expires_at > now())`,
    [id],
  );
  const row = rows[0];
  // The digest is compared even when the key is unusable for another reason, so timing reveals nothing.
  const matches = row ? deps.secrets.digester.matches(key, row.secret_digest) : false;
  if (!row || !matches || row.team_archived) throw INVALID();
  if (row.kind === 'personal' && (!row.person_active || !row.person_role)) throw INVALID();
  if (row.service_account_id && !row.account_enabled) throw INVALID();
  void deps.db
    .query(`UPDATE identity.api_keys SET last_used_at = now() WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < now() - interval '1 minute')`, [row.id])
    .catch((error: unknown) => deps.logger.warn({ err: error }, 'could not record key use'));
  if (row.service_account_id) {
    void deps.db
      .query(`UPDATE identity.service_accounts SET last_used_at = now() WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < now() - interval '1 minute')`, [row.service_account_id])
      .catch((error: unknown) => deps.logger.warn({ err: error }, 'could not record service account use'));
  }
  // A personal key never exceeds what its person's current role allows (§5.1), even after a demotion.
  const scopes = row.kind === 'personal' ? row.scopes.filter((s) => (scopesAllowedFor(row.person_role!) as readonly string[]).includes(s)) : row.scopes;
  return {
    ...emptyPrincipal(),
    kind: PrincipalKind.PRINCIPAL_KIND_API_KEY,
    personId: row.person_id ?? '',
    email: row.person_email ?? '',
    displayName: row.person_display_name ?? '',
    apiKeyId: row.id,
    apiKeyName: row.name,
    apiKeyKind: row.kind === 'personal' ? ApiKeyKind.API_KEY_KIND_PERSONAL : ApiKeyKind.API_KEY_KIND_SERVICE,
    apiKeyTeamId: row.team_id,
    scopes,
    knowledgeBaseIds: row.knowledge_base_ids,
    agentIds: row.agent_ids,
    serviceAccountId: row.service_account_id ?? '',
    serviceAccountName: row.account_name ?? '',
    expiresAt: row.expires_at?.toISOString(),
  };
}

/** How a principal reaches a team: by membership, as the team's service key, or as its service account. */
async function teamAccessOf(db: Queryable, principal: Principal, teamRef: string): Promise<TeamAccess | undefined> {
  const team = await findTeamByRef(db, teamRef);
  if (!team) return undefined;
  const access: TeamAccess = { team: toTeam(team), role: teamRoleOf(null), via: '' };
  const isKey = principal.kind === PrincipalKind.PRINCIPAL_KIND_API_KEY;
  if (isKey && principal.apiKeyTeamId !== team.id) return access;
  if (isKey && principal.apiKeyKind === ApiKeyKind.API_KEY_KIND_SERVICE) {
    if (!principal.serviceAccountId) return { ...access, via: 'service_key' };
    const { rows } = await db.query<{ role: RoleName }>('SELECT role FROM identity.service_accounts WHERE id = $1', [principal.serviceAccountId]);
    return { ...access, role: teamRoleOf(rows[0]?.role), via: 'service_account' };
  }
  const role = await membershipRole(db, team.id, principal.personId);
  return role ? { ...access, role: teamRoleOf(role), via: 'membership' } : access;
}

function emptyPrincipal(): Principal {
  return {
    kind: PrincipalKind.PRINCIPAL_KIND_UNSPECIFIED,
    personId: '',
    email: '',
    displayName: '',
    platformRole: PlatformRole.PLATFORM_ROLE_UNSPECIFIED,
    sessionId: '',
    apiKeyId: '',
    apiKeyName: '',
    apiKeyKind: ApiKeyKind.API_KEY_KIND_UNSPECIFIED,
    apiKeyTeamId: '',
    scopes: [],
    knowledgeBaseIds: [],
    agentIds: [],
    serviceAccountId: '',
    serviceAccountName: '',
  };
}
