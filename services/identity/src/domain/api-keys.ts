import type {
  ApiKey,
  CreateApiKeyRequest,
  CreatedApiKey,
  GetApiKeyRequest,
  ListApiKeysRequest,
  ListApiKeysResponse,
  RevokeApiKeyRequest,
} from '@platform/proto/gen/platform/identity/v1/identity';
import { ApiKeyKind } from '@platform/proto/gen/platform/identity/v1/identity';
import { AppError, auditContext, type FieldError } from '@platform/runtime';
import { recordAudit } from './audit';
import { assertWritableTeam } from './teams';
import type { IdentityDeps } from '../deps';
import { findApiKey, insertApiKey, listApiKeys as selectApiKeys, markApiKeyRevoked, pageOf, pagePosition, toApiKey, type ApiKeyRow } from '../store/api-keys-store';
import { teamRoleName, type RoleName } from '../store/mappers';
import { findServiceAccount } from '../store/service-accounts-store';
import { membershipRole } from '../store/teams-store';
import { newApiKey } from './credentials';
import { SCOPES, scopesAllowedFor } from './scopes';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const MAX_KEY_NAME = 100;
export const MAX_RESTRICTION_IDS = 100;

/** Who may create service keys (team keys and keys of a service account): §5.1 "created by admins and owners". */
const SERVICE_KEY_ROLES: readonly RoleName[] = ['owner', 'admin'];

interface KeyInput {
  name: string;
  scopes: string[];
  expiresAt: string | null;
  knowledgeBaseIds: string[];
  agentIds: string[];
}

/** Checks a new key's fields (the edge checks the same; the service does not trust it). Names every bad field. */
function validKeyInput(request: CreateApiKeyRequest): KeyInput {
  const problems: FieldError[] = [];
  const name = request.name.trim();
  if (!name || name.length > MAX_KEY_NAME) problems.push({ field: 'name', problem: `must be 1 to ${MAX_KEY_NAME} characters` });
  if (request.scopes.length === 0) problems.push({ field: 'scopes', problem: 'must name at least one scope' });
  else if (!request.scopes.every((s) => (SCOPES as readonly string[]).includes(s))) problems.push({ field: 'scopes', problem: `must be among ${SCOPES.join(', ')}` });
  else if (new Set(request.scopes).size !== request.scopes.length) problems.push({ field: 'scopes', problem: 'must not repeat a scope' });
  let expiresAt: string | null = null;
  if (request.expiresAt) {
    const at = Date.parse(request.expiresAt);
    if (Number.isNaN(at) || at <= Date.now()) problems.push({ field: 'expiresAt', problem: 'must be a time in the future' });
    else expiresAt = new Date(at).toISOString();
  }
  const ids = (field: string, values: string[]): string[] => {
    if (values.length > MAX_RESTRICTION_IDS) problems.push({ field, problem: `must list at most ${MAX_RESTRICTION_IDS} ids` });
    else if (!values.every((v) => UUID.test(v))) problems.push({ field, problem: 'must be UUIDs' });
    return [...new Set(values.map((v) => v.toLowerCase()))];
  };
  const knowledgeBaseIds = ids('knowledgeBaseIds', request.knowledgeBaseIds);
  const agentIds = ids('agentIds', request.agentIds);
  if (problems.length > 0) throw AppError.invalid(`Invalid API key: ${problems.map((p) => p.field).join(', ')}`, problems);
  return { name, scopes: request.scopes, expiresAt, knowledgeBaseIds, agentIds };
}

/**
 * Creates a key and returns it with the full key, the only time it is ever available: only its digest is
 * stored. Personal keys act as the requesting person and carry at most the scopes of their current role;
 * service keys (of the team, or of one of its service accounts) are made by owners and admins.
 */
export async function createApiKey(deps: IdentityDeps, request: CreateApiKeyRequest): Promise<CreatedApiKey> {
  const input = validKeyInput(request);
  const personal = request.kind === ApiKeyKind.API_KEY_KIND_PERSONAL;
  if (!personal && request.kind !== ApiKeyKind.API_KEY_KIND_SERVICE) {
    throw AppError.invalid('Invalid API key kind', [{ field: 'kind', problem: 'must be personal or service' }]);
  }
  if (personal && request.serviceAccountId) {
    throw AppError.invalid('A service account\'s keys are service keys', [{ field: 'kind', problem: 'must be service for a service account' }]);
  }
  const actorId = request.context?.actor?.userId || null;
  const generated = newApiKey();

  const row = await deps.db.transaction(async (tx) => {
    // Keys of an archived team could never be used; creating one is a change it refuses (409 team_archived).
    await assertWritableTeam(tx, request.teamId);
    if (personal) {
      // The person's role as stored now, not as claimed: it bounds the key's scopes.
      const role = actorId ? await membershipRole(tx, request.teamId, actorId) : null;
      if (!role) throw AppError.forbidden('Only members of the team can create personal keys');
      const allowed = scopesAllowedFor(role) as readonly string[];
      const beyond = input.scopes.filter((s) => !allowed.includes(s));
      if (beyond.length > 0) {
        throw AppError.invalid(`A ${role}'s personal key may carry only: ${allowed.join(', ')}`, [
          { field: 'scopes', problem: `not allowed for role ${role}: ${beyond.join(', ')}` },
        ]);
      }
    } else {
      const role = teamRoleName(request.callerRole);
      if (!role || !SERVICE_KEY_ROLES.includes(role)) throw AppError.forbidden('Only team owners and admins can create service keys');
    }
    const account = request.serviceAccountId && UUID.test(request.serviceAccountId) ? await findServiceAccount(tx, request.teamId, request.serviceAccountId) : null;
    if (request.serviceAccountId && !account) throw AppError.notFound('Service account');

    await insertApiKey(tx, {
      id: generated.id,
      teamId: request.teamId,
      kind: personal ? 'personal' : 'service',
      personId: personal ? actorId : null,
      serviceAccountId: account?.id ?? null,
      name: input.name,
      scopes: input.scopes,
      knowledgeBaseIds: input.knowledgeBaseIds,
      agentIds: input.agentIds,
      secretDigest: deps.secrets.digester.digest(generated.key),
      hint: generated.hint,
      expiresAt: input.expiresAt,
      createdBy: actorId,
    });
    const created = (await findApiKey(tx, request.teamId, generated.id))!;
    await recordAudit(tx, {
      ...auditContext(request.context),
      teamId: request.teamId,
      action: account ? 'service_account.key_create' : 'api_key.create',
      target: { type: 'api_key', id: created.id, label: created.name },
      ...(account ? { parent: { type: 'service_account', id: account.id, label: account.name } } : {}),
      after: auditView(created),
    });
    return created;
  });
  return { apiKey: toApiKey(row), secret: generated.key };
}

export async function listApiKeys(deps: IdentityDeps, request: ListApiKeysRequest): Promise<ListApiKeysResponse> {
  const page = pagePosition(request.page);
  const rows = await selectApiKeys(
    deps.db,
    {
      teamId: request.teamId,
      ...(request.personId ? { personId: request.personId } : {}),
      ...(request.serviceAccountId ? { serviceAccountId: request.serviceAccountId } : {}),
      includeInactive: request.includeInactive,
    },
    page,
  );
  const result = pageOf(rows, page);
  return { apiKeys: result.rows.map(toApiKey), page: { nextCursor: result.nextCursor } };
}

export async function getApiKey(deps: IdentityDeps, request: GetApiKeyRequest): Promise<ApiKey> {
  const row = await findApiKey(deps.db, request.teamId, request.apiKeyId);
  if (!row) throw AppError.notFound('API key');
  return toApiKey(row);
}

/**
 * Revokes a key; it answers 401 from its next request. Idempotent: revoking a revoked key changes nothing,
 * writes no audit entry, and returns the key as it is.
 */
export async function revokeApiKey(deps: IdentityDeps, request: RevokeApiKeyRequest): Promise<ApiKey> {
  const row = await deps.db.transaction(async (tx) => {
    // Like every change of an archived team (409 team_archived); its keys fail authentication meanwhile anyway.
    await assertWritableTeam(tx, request.teamId);
    const before = await findApiKey(tx, request.teamId, request.apiKeyId);
    if (!before) throw AppError.notFound('API key');
    // Already revoked (perhaps by a concurrent call): read it again so the answer shows the revocation.
    if (!(await markApiKeyRevoked(tx, request.teamId, request.apiKeyId))) return (await findApiKey(tx, request.teamId, request.apiKeyId)) ?? before;
    const after = (await findApiKey(tx, request.teamId, request.apiKeyId))!;
    const account = after.service_account_id ? await findServiceAccount(tx, request.teamId, after.service_account_id) : null;
    await recordAudit(tx, {
      ...auditContext(request.context),
      teamId: request.teamId,
      action: 'api_key.revoke',
      target: { type: 'api_key', id: after.id, label: after.name },
      ...(account ? { parent: { type: 'service_account', id: account.id, label: account.name } } : {}),
      before: auditView(before),
      after: auditView(after),
    });
    return after;
  });
  return toApiKey(row);
}

/** What an audit entry records of a key: its description and hint, never the key or its digest. */
function auditView(row: ApiKeyRow): Record<string, unknown> {
  return {
    name: row.name,
    kind: row.kind,
    scopes: row.scopes,
    knowledgeBaseIds: row.knowledge_base_ids,
    agentIds: row.agent_ids,
    hint: row.hint,
    personId: row.person_id,
    serviceAccountId: row.service_account_id,
    expiresAt: row.expires_at?.toISOString() ?? null,
    status: row.status,
  };
}
