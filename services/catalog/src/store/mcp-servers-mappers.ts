import type { McpServer } from '@platform/proto/gen/platform/catalog/v1/catalog';
import { iso } from './mappers';

/** A `catalog.mcp_servers` row as the adapters return it: bigint as string, timestamps as Date. */
export interface McpServerRow {
  id: string;
  team_id: string;
  slug: string;
  name: string;
  description: string;
  url: string;
  transport: string;
  auth_header_name: string | null;
  auth_value_sealed: string | null;
  auth_value_hint: string | null;
  timeout_seconds: number;
  enabled: boolean;
  send_identity: boolean;
  capture_payloads: boolean;
  publish_state: string;
  access_mode: string;
  visibility: string;
  personal: boolean;
  headers_sealed: string | null;
  revision: string;
  created_by: string | null;
  created_at: Date;
  updated_at: Date;
}

/** The proto view of a server: the sealed credential never leaves the service, only whether one exists and its hint. */
export function toMcpServer(row: McpServerRow): McpServer {
  const hasAuth = row.auth_value_sealed !== null;
  return {
    id: row.id,
    teamId: row.team_id,
    slug: row.slug,
    name: row.name,
    description: row.description,
    url: row.url,
    transport: row.transport,
    authHeaderName: hasAuth ? (row.auth_header_name ?? '') : '',
    hasAuth,
    authValueHint: hasAuth ? (row.auth_value_hint ?? '') : '',
    timeoutSeconds: row.timeout_seconds,
    enabled: row.enabled,
    sendIdentity: row.send_identity,
    capturePayloads: row.capture_payloads,
    publishState: row.publish_state,
    revision: row.revision,
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
    // Filled by the publishing, health and platform-view slices (issue 5).
    effectivePublishPolicy: '',
    publishRequestNote: '',
    publishReviewedByName: '',
    publishReviewNote: '',
    pendingChanges: 0,
    lastRefreshError: '',
    accessMode: row.access_mode,
    visibility: row.visibility,
    personal: row.personal,
    visibleTeamIds: [],
    hasHeaders: hasAuth || row.headers_sealed !== null,
  };
}
