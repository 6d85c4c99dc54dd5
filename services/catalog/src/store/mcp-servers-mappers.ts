import type { McpServer } from '@platform/proto/gen/platform/catalog/v1/catalog';
import { PLATFORM_TEAM_ID } from '@platform/runtime';
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
  refreshed_at: Date | null;
  last_refresh_error: string | null;
  publish_requested_at: Date | null;
  publish_request_note: string | null;
  publish_reviewed_at: Date | null;
  publish_reviewed_by: string | null;
  publish_reviewed_by_name: string | null;
  publish_review_note: string | null;
  /** The latest health check (0009_health.sql): 'unknown' until the first. */
  health_status: string;
  health_checked_at: Date | null;
  health_status_since: Date | null;
  health_latency_ms: number | null;
  health_error_class: string | null;
  health_sign_in_required: boolean;
  health_message: string | null;
  /** Present only where the query selected `capabilitySummarySql` (mcp-servers-store.ts); else counted as none. */
  capability_summary?: CapabilitySummary | null;
}

/** The server view's aggregates over its present capabilities. */
export interface CapabilitySummary {
  tools: number;
  resources: number;
  resource_templates: number;
  prompts: number;
  /** Present capabilities not approved as they are now: new ones, and changed ones. */
  pending: number;
  /** The digest of the present capabilities (domain/capabilities-fingerprint.ts). */
  fingerprint: string;
}

/**
 * Whether anything secret is sent upstream with the server's requests: the team's own credential (`authValue`) or
 * the headers a platform admin set through op 16. `hasAuth` in the views and audit entries says this, so a server
 * never reads as sending nothing while it sends a credential.
 */
export function hasStoredSecret(row: Pick<McpServerRow, 'auth_value_sealed' | 'headers_sealed'>): boolean {
  return row.auth_value_sealed !== null || row.headers_sealed !== null;
}

/**
 * The proto view of a server: the sealed credential never leaves the service, only whether one exists and its hint.
 * `hasAuth` covers every stored secret (hasStoredSecret); the header name and hint describe the team's own
 * credential only, since op 16's headers are never shown. `effectivePublishPolicy` is the owning team's
 * (domain/publish-policy.ts); the row does not know it.
 */
export function toMcpServer(row: McpServerRow, effectivePublishPolicy = ''): McpServer {
  const hasCredential = row.auth_value_sealed !== null;
  const hasAuth = hasStoredSecret(row);
  const summary = row.capability_summary;
  return {
    id: row.id,
    teamId: row.team_id,
    slug: row.slug,
    name: row.name,
    description: row.description,
    url: row.url,
    transport: row.transport,
    authHeaderName: hasCredential ? (row.auth_header_name ?? '') : '',
    hasAuth,
    authValueHint: hasCredential ? (row.auth_value_hint ?? '') : '',
    timeoutSeconds: row.timeout_seconds,
    enabled: row.enabled,
    sendIdentity: row.send_identity,
    capturePayloads: row.capture_payloads,
    publishState: row.publish_state,
    revision: row.revision,
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
    effectivePublishPolicy,
    publishRequestedAt: iso(row.publish_requested_at),
    publishRequestNote: row.publish_request_note ?? '',
    publishReviewedAt: iso(row.publish_reviewed_at),
    publishReviewedByName: row.publish_reviewed_by_name ?? '',
    publishReviewNote: row.publish_review_note ?? '',
    counts: {
      tools: summary?.tools ?? 0,
      resources: summary?.resources ?? 0,
      resourceTemplates: summary?.resource_templates ?? 0,
      prompts: summary?.prompts ?? 0,
    },
    pendingChanges: summary?.pending ?? 0,
    capabilitiesFingerprint: summary?.fingerprint ?? '',
    health: {
      status: row.health_status,
      checkedAt: iso(row.health_checked_at),
      statusSince: iso(row.health_status_since),
      latencyMs: row.health_latency_ms ?? 0,
      errorClass: row.health_error_class ?? '',
      message: row.health_message ?? '',
      signInRequired: row.health_sign_in_required,
    },
    refreshedAt: iso(row.refreshed_at),
    lastRefreshError: row.last_refresh_error ?? '',
    accessMode: row.access_mode,
    visibility: row.visibility,
    personal: row.personal,
    // A team's own server is offered to that team only; a platform server's list is read by domain/platform-servers.ts.
    visibleTeamIds: row.team_id === PLATFORM_TEAM_ID ? [] : [row.team_id],
    hasHeaders: hasAuth,
    // The admin view's tools: filled by domain/platform-servers.ts.
    tools: [],
  };
}
