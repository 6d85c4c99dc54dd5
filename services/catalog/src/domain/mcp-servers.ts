import { randomUUID } from 'node:crypto';
import type {
  CreateMcpServerRequest,
  DeleteMcpServerRequest,
  DeleteMcpServerResponse,
  GetMcpServerRequest,
  ListMcpServersRequest,
  ListMcpServersResponse,
  McpServer,
  UpdateMcpServerRequest,
} from '@platform/proto/gen/platform/catalog/v1/catalog';
import type { RequestContext } from '@platform/proto/gen/platform/common/v1/common';
import { catalogChangeCommitted, AppError, auditContext, parseAllowedNetworks, writeAuditEvent, type Transaction } from '@platform/runtime';
import { SCHEMA, type CatalogDeps } from '../deps';
import { isUniqueViolation } from '../store/gateways-store';
import { hasStoredSecret, toMcpServer, type McpServerRow } from '../store/mcp-servers-mappers';
import {
  deleteMcpServerRow,
  findTeamMcpServer,
  insertMcpServer,
  listTeamMcpServers,
  mcpServerSlugTaken,
  updateMcpServerRow,
  type McpServerFields,
} from '../store/mcp-servers-store';
import { UUID } from './gateway-rules';
import {
  assertMcpServerUrlAllowed,
  DEFAULT_TIMEOUT_SECONDS,
  DEFAULT_TRANSPORT,
  hintOf,
  validMcpServer,
  type McpServerDraft,
} from './mcp-servers-rules';
import { decodeSlugCursor, encodeSlugCursor, pageLimit } from './paging';
import { publishPolicyOf, writableTeam } from './publish-policy';
import { assertTeamMoveKeepsSecretsHome } from './secret-origin';
import { announceServerExposureChange } from './refresh-exposure';

const SLUG_TAKEN = () => AppError.conflict('An MCP server with this slug already exists in the team');
const NOT_FOUND = () => AppError.notFound('MCP server');

/** What an audit entry records of a server: never the credential, only whether any secret is stored. */
function auditView(row: McpServerRow): Record<string, unknown> {
  return {
    slug: row.slug,
    name: row.name,
    description: row.description,
    url: row.url,
    transport: row.transport,
    authHeaderName: row.auth_header_name,
    // As the view says it: any stored secret, the team's credential or a platform admin's headers.
    hasAuth: hasStoredSecret(row),
    timeoutSeconds: row.timeout_seconds,
    enabled: row.enabled,
    sendIdentity: row.send_identity,
    capturePayloads: row.capture_payloads,
  };
}

function allowedNetworks(deps: CatalogDeps) {
  return parseAllowedNetworks(deps.config.env.ALLOWED_INTERNAL_NETWORKS);
}

/** Seals a credential for one server (its id is the associated data, so a sealed value copied to another row fails). */
function sealed(deps: CatalogDeps, serverId: string, draft: McpServerDraft, kept: McpServerRow | null): McpServerFields {
  const { authValue, ...rest } = draft;
  let authValueSealed: string | null = null;
  let authValueHint: string | null = null;
  if (authValue !== null && kept === null) {
    authValueSealed = deps.secrets.secretBox.encrypt(authValue, serverId);
    authValueHint = hintOf(authValue);
  } else if (kept !== null) {
    authValueSealed = kept.auth_value_sealed;
    authValueHint = kept.auth_value_hint;
  }
  return { ...rest, authValueSealed, authValueHint };
}

/** Whether a change sets any plain field the server does not have already (a given credential is decided apart). */
function alters(row: McpServerRow, draft: McpServerDraft): boolean {
  return (
    draft.slug !== row.slug ||
    draft.name !== row.name ||
    draft.description !== row.description ||
    draft.url !== row.url ||
    draft.transport !== row.transport ||
    draft.authHeaderName !== row.auth_header_name ||
    draft.timeoutSeconds !== row.timeout_seconds ||
    draft.enabled !== row.enabled ||
    draft.sendIdentity !== row.send_identity ||
    draft.capturePayloads !== row.capture_payloads
  );
}

async function audit(tx: Transaction, context: RequestContext | undefined, teamId: string, action: string, row: McpServerRow, change: Record<string, unknown>) {
  await writeAuditEvent(tx, SCHEMA, {
    ...auditContext(context),
    teamId,
    action,
    target: { type: 'mcp_server', id: row.id, label: row.slug },
    ...change,
  });
}

/** Registers a team's MCP server. The URL passes the address guard; the credential is sealed. Audited `mcp_server.create`. */
export async function createMcpServer(deps: CatalogDeps, request: CreateMcpServerRequest): Promise<McpServer> {
  const draft = validMcpServer({
    slug: request.slug,
    name: request.name,
    description: request.description,
    url: request.url,
    transport: request.transport || DEFAULT_TRANSPORT,
    authHeaderName: request.authHeaderName || null,
    authValue: request.authValue || null,
    timeoutSeconds: request.timeoutSeconds || DEFAULT_TIMEOUT_SECONDS,
    enabled: request.enabled,
    sendIdentity: request.sendIdentity,
    capturePayloads: request.capturePayloads,
  });
  const { teamId, policy } = await writableTeam(deps, request.teamId);
  await assertMcpServerUrlAllowed(draft.url, allowedNetworks(deps));
  const id = randomUUID();
  const fields = sealed(deps, id, draft, null);
  try {
    const row = await deps.db.transaction(async (tx) => {
      if (await mcpServerSlugTaken(tx, teamId, draft.slug)) throw SLUG_TAKEN();
      const created = await insertMcpServer(tx, id, teamId, request.context?.actor?.userId || null, fields);
      await audit(tx, request.context, teamId, 'mcp_server.create', created, { after: auditView(created) });
      return created;
    });
    return toMcpServer(row, policy);
  } catch (error) {
    // Two concurrent creates of one slug: the unique constraint refuses the second.
    throw isUniqueViolation(error) ? SLUG_TAKEN() : error;
  }
}

/** A team's servers in slug order, keyset-paged on the slug (unique within the team). */
export async function listMcpServers(deps: CatalogDeps, request: ListMcpServersRequest): Promise<ListMcpServersResponse> {
  const limit = pageLimit(request.page);
  const after = request.page?.cursor ? decodeSlugCursor(request.page.cursor) : null;
  if (!UUID.test(request.teamId)) return { servers: [], page: { nextCursor: '' } };
  const rows = await listTeamMcpServers(deps.db, request.teamId, after, limit);
  const policy = await publishPolicyOf(deps, request.teamId);
  const kept = rows.slice(0, limit);
  const nextCursor = rows.length > limit ? encodeSlugCursor(kept[kept.length - 1]!.slug) : '';
  return { servers: kept.map((row) => toMcpServer(row, policy)), page: { nextCursor } };
}

/** A server of the team by id; 404 when the team has none such (another team's server included). */
export async function getMcpServer(deps: CatalogDeps, request: GetMcpServerRequest): Promise<McpServer> {
  const row = UUID.test(request.teamId) && UUID.test(request.serverId) ? await findTeamMcpServer(deps.db, request.teamId, request.serverId.toLowerCase()) : null;
  if (!row) throw NOT_FOUND();
  return toMcpServer(row, await publishPolicyOf(deps, row.team_id));
}

/**
 * Changes any field of a server at the expected revision (412 when stale). `authValue` absent keeps the stored
 * credential, empty removes it, anything else replaces it. A changed URL passes the address guard again; moving
 * to another origin needs the credential given again and is a platform admin's alone while admin headers are stored.
 * Audited `mcp_server.update`, with `authValueChanged` instead of the credential. A change that alters nothing (a
 * given `authValue` always does, as a new password does) answers the server as it is: no revision move, no entry.
 */
export async function updateMcpServer(deps: CatalogDeps, request: UpdateMcpServerRequest): Promise<McpServer> {
  const { teamId, policy } = await writableTeam(deps, request.teamId);
  if (!UUID.test(request.serverId)) throw NOT_FOUND();
  const serverId = request.serverId.toLowerCase();
  const current = await findTeamMcpServer(deps.db, teamId, serverId);
  if (!current) throw NOT_FOUND();

  const replacing = request.authValue !== undefined;
  const draft = validMcpServer({
    slug: request.slug ?? current.slug,
    name: request.name ?? current.name,
    description: request.description ?? current.description,
    url: request.url ?? current.url,
    transport: request.transport ?? current.transport,
    // Removing the credential drops its header name too, unless this change names one (then it is refused).
    authHeaderName:
      request.authHeaderName !== undefined ? request.authHeaderName || null : replacing && !request.authValue ? null : current.auth_header_name,
    // Kept credentials are not decrypted: a placeholder stands for "present" while the rules run.
    authValue: replacing ? request.authValue || null : current.auth_value_sealed !== null ? 'kept' : null,
    timeoutSeconds: request.timeoutSeconds ?? current.timeout_seconds,
    enabled: request.enabled ?? current.enabled,
    sendIdentity: request.sendIdentity ?? current.send_identity,
    capturePayloads: request.capturePayloads ?? current.capture_payloads,
  });
  if (request.url !== undefined) await assertMcpServerUrlAllowed(draft.url, allowedNetworks(deps));
  const authValueChanged = replacing && (request.authValue !== '' || current.auth_value_sealed !== null);

  try {
    const row = await deps.db.transaction(async (tx) => {
      const locked = await findTeamMcpServer(tx, teamId, serverId, true);
      if (!locked) throw NOT_FOUND();
      if (String(locked.revision) !== request.expectedRevision) throw new AppError('precondition_failed', 'The MCP server has changed since it was read');
      // Against the locked row: a stored secret goes only to the origin it was given for.
      assertTeamMoveKeepsSecretsHome(locked, draft.url, replacing);
      if (draft.slug !== locked.slug && (await mcpServerSlugTaken(tx, teamId, draft.slug, serverId))) throw SLUG_TAKEN();
      // A change that alters nothing keeps the revision and writes no entry (docs/api.md, Revisions).
      if (!authValueChanged && !alters(locked, draft)) return { updated: locked, altered: false };
      const fields = sealed(deps, serverId, draft, replacing ? null : locked);
      const updated = await updateMcpServerRow(tx, serverId, request.expectedRevision, fields);
      if (!updated) throw new AppError('precondition_failed', 'The MCP server has changed since it was read');
      await audit(tx, request.context, teamId, 'mcp_server.update', updated, {
        before: auditView(locked),
        after: { ...auditView(updated), ...(authValueChanged ? { authValueChanged: true } : {}) },
      });
      return { updated, altered: true };
    });
    // Its address, credential, timeout or state may be what gateways use now.
    if (row.altered && row.updated.publish_state === 'published') await announceServerExposureChange(deps, row.updated.id);
    return toMcpServer(row.updated, policy);
  } catch (error) {
    throw isUniqueViolation(error) ? SLUG_TAKEN() : error;
  }
}

/** Deletes a server of the team. Audited `mcp_server.delete`. */
export async function deleteMcpServer(deps: CatalogDeps, request: DeleteMcpServerRequest): Promise<DeleteMcpServerResponse> {
  const { teamId } = await writableTeam(deps, request.teamId);
  if (!UUID.test(request.serverId)) throw NOT_FOUND();
  const serverId = request.serverId.toLowerCase();
  const gatewaysNamingIt = await deps.db.transaction(async (tx) => {
    const row = await findTeamMcpServer(tx, teamId, serverId, true);
    if (!row) throw NOT_FOUND();
    const gatewayIds = await deleteMcpServerRow(tx, serverId);
    // The gateways it leaves change too; their entries would be one per gateway, so this one names them.
    await audit(tx, request.context, teamId, 'mcp_server.delete', row, { before: auditView(row), metadata: { removedFromGateways: gatewayIds } });
    return gatewayIds;
  });
  // Those gateways alone (never every gateway, as refresh-exposure.ts explains); a server in none was served nowhere.
  if (gatewaysNamingIt.length > 0) await catalogChangeCommitted(deps, gatewaysNamingIt);
  return {};
}
