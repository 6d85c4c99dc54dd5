import type { AdminUpdateMcpServerRequest } from '@platform/proto/gen/platform/catalog/v1/catalog';
import { AppError, PLATFORM_TEAM_ID, type FieldError } from '@platform/runtime';
import { HEADER_VALUE_RULE, headerNameProblem, isHeaderValue, MAX_AUTH_VALUE, MAX_DESCRIPTION, MAX_HEADER_NAME, MAX_NAME, mcpServerUrlProblem } from './mcp-servers-rules';

export const ACCESS_MODES = ['proxy', 'direct'] as const;
export const VISIBILITIES = ['all', 'teams'] as const;
/** Spec §8 caps headers of a model provider at 20; MCP servers take the same. */
export const MAX_HEADERS = 20;
/** All names and values together: far above any real credential set, small enough to seal and send on every call. */
export const MAX_HEADERS_BYTES = 16 * 1024;
export const MAX_VISIBLE_TEAMS = 100;
/** A team slug (at most 63) or id (36). */
const MAX_TEAM_REF = 63;

/** Whether a server is a team's own (not the platform team's): it stays proxy-only and visible to its team only. */
export function isTeamServer(teamId: string): boolean {
  return teamId !== PLATFORM_TEAM_ID;
}

/** The plain fields op 16 may set, normalised; absent means unchanged. */
export interface AdminChange {
  name?: string;
  description?: string;
  url?: string;
  /** null: leave the headers alone; a map (possibly empty): replace them all. */
  headers: Record<string, string> | null;
  accessMode?: string;
  visibility?: string;
  personal?: boolean;
  /** null: leave the list alone; else the team references (slugs or ids) to resolve. */
  teamRefs: string[] | null;
  enabled?: boolean;
}

function headerProblems(headers: Record<string, string>): FieldError[] {
  const problems: FieldError[] = [];
  const entries = Object.entries(headers);
  if (entries.length > MAX_HEADERS) problems.push({ field: 'headers', problem: `must have at most ${MAX_HEADERS} headers` });
  const seen = new Set<string>();
  let bytes = 0;
  for (const [name, value] of entries) {
    const lower = name.toLowerCase();
    bytes += Buffer.byteLength(name) + Buffer.byteLength(value);
    // The name is not secret, but the value is never echoed back: the problem names the header only.
    const nameProblem = headerNameProblem(name);
    if (nameProblem) problems.push({ field: `headers.${name.slice(0, MAX_HEADER_NAME)}`, problem: nameProblem });
    else if (seen.has(lower)) problems.push({ field: `headers.${name}`, problem: 'is given twice (header names are case-insensitive)' });
    seen.add(lower);
    if (value.length > MAX_AUTH_VALUE || !isHeaderValue(value)) {
      problems.push({ field: `headers.${name.slice(0, MAX_HEADER_NAME)}`, problem: `value ${HEADER_VALUE_RULE}` });
    }
  }
  if (bytes > MAX_HEADERS_BYTES) problems.push({ field: 'headers', problem: `names and values must total at most ${MAX_HEADERS_BYTES} bytes` });
  return problems;
}

/** Checks the fields of an op 16 request (not yet the team rule, which needs the server), throwing one 400 naming each bad field. */
export function validAdminChange(request: AdminUpdateMcpServerRequest): AdminChange {
  const problems: FieldError[] = [];
  const name = request.name?.trim();
  if (name !== undefined && (!name || name.length > MAX_NAME)) problems.push({ field: 'name', problem: `must be 1 to ${MAX_NAME} characters` });
  const description = request.description?.trim();
  if (description !== undefined && description.length > MAX_DESCRIPTION) problems.push({ field: 'description', problem: `must be at most ${MAX_DESCRIPTION} characters` });
  const url = request.url?.trim();
  const urlProblem = url === undefined ? undefined : mcpServerUrlProblem(url);
  if (urlProblem) problems.push({ field: 'url', problem: urlProblem });
  if (request.accessMode !== undefined && !(ACCESS_MODES as readonly string[]).includes(request.accessMode)) {
    problems.push({ field: 'accessMode', problem: `must be one of ${ACCESS_MODES.join(', ')}` });
  }
  if (request.visibility !== undefined && !(VISIBILITIES as readonly string[]).includes(request.visibility)) {
    problems.push({ field: 'visibility', problem: `must be one of ${VISIBILITIES.join(', ')}` });
  }
  const headers = request.replaceHeaders ? request.headers : null;
  if (headers) problems.push(...headerProblems(headers));
  const teamRefs = request.replaceTeams ? [...new Set(request.visibleTeamIds.map((ref) => ref.trim().toLowerCase()))] : null;
  if (teamRefs && teamRefs.length > MAX_VISIBLE_TEAMS) problems.push({ field: 'teams', problem: `must name at most ${MAX_VISIBLE_TEAMS} teams` });
  if (teamRefs?.some((ref) => !ref || ref.length > MAX_TEAM_REF)) problems.push({ field: 'teams', problem: 'must hold team slugs or ids' });
  if (problems.length > 0) throw AppError.invalid(`Invalid MCP server change: ${[...new Set(problems.map((p) => p.field))].join(', ')}`, problems);
  return {
    ...(name !== undefined ? { name } : {}),
    ...(description !== undefined ? { description } : {}),
    ...(url !== undefined ? { url } : {}),
    headers,
    ...(request.accessMode !== undefined ? { accessMode: request.accessMode } : {}),
    ...(request.visibility !== undefined ? { visibility: request.visibility } : {}),
    ...(request.personal !== undefined ? { personal: request.personal } : {}),
    teamRefs,
    ...(request.enabled !== undefined ? { enabled: request.enabled } : {}),
  };
}

/**
 * Spec op 16: a team's own server stays proxy-only and visible to its team only. Setting a visibility (either
 * value), personal true, access mode `direct`, or teams other than the server's own team is 400
 * `team_mcp_visibility`; the values it already has (proxy, personal false, its own team) are accepted.
 */
export function assertTeamServerStaysPrivate(ownerTeamId: string, change: AdminChange, visibleTeamIds: readonly string[] | null): void {
  if (!isTeamServer(ownerTeamId)) return;
  const refused: string[] = [];
  if (change.visibility !== undefined) refused.push('visibility');
  if (change.personal === true) refused.push('personal');
  if (change.accessMode === 'direct') refused.push('accessMode');
  if (visibleTeamIds?.some((id) => id !== ownerTeamId)) refused.push('teams');
  if (refused.length === 0) return;
  throw new AppError('team_mcp_visibility', "A team's own MCP server stays proxy-only and visible to its team only", {
    fields: refused.map((field) => ({ field, problem: "cannot be changed on a team's own server; only platform servers are offered to other teams" })),
  });
}
