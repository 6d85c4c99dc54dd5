import { randomUUID } from 'node:crypto';
import type { Capability } from '@platform/proto/gen/platform/catalog/v1/catalog';
import type { Queryable } from '@platform/runtime';
import { capabilitiesFingerprintSql } from '../domain/capabilities-fingerprint';
import type { DiscoveredCapability } from '../domain/discovery';
import { iso } from './mappers';

/** A `catalog.capabilities` row as the adapters return it (jsonb parsed, timestamps as Date). */
export interface CapabilityRow {
  id: string;
  server_id: string;
  kind: string;
  name: string;
  title: string;
  description: string;
  definition: Record<string, unknown>;
  fingerprint: string;
  approved_fingerprint: string | null;
  approved_at: Date | null;
  approved_by: string | null;
  approved_by_name: string | null;
  first_seen_at: Date;
  last_seen_at: Date;
  gone_at: Date | null;
}

const COLUMNS = `id, server_id, kind, name, title, description, definition, fingerprint, approved_fingerprint, approved_at,
  approved_by, approved_by_name, first_seen_at, last_seen_at, gone_at`;

/**
 * A kind's place in the order lists show them (tool, resource, resource_template, prompt). Migration 0013 indexes
 * this very expression of `kind`: a query must spell it the same way for the planner to use those indexes.
 */
export const kindOrderOf = (kind: string) => `CASE ${kind} WHEN 'tool' THEN 1 WHEN 'resource' THEN 2 WHEN 'resource_template' THEN 3 ELSE 4 END`;
const LIST_ORDER = `${kindOrderOf('kind')}, name, id`;

/** Every capability of the server, gone ones included, in no order: what a refresh compares a discovery with. */
export async function listServerCapabilities(db: Queryable, serverId: string): Promise<CapabilityRow[]> {
  const { rows } = await db.query<CapabilityRow>(`SELECT ${COLUMNS} FROM catalog.capabilities WHERE server_id = $1`, [serverId]);
  return rows;
}

/**
 * Locks the server's present capabilities until the transaction ends. An approval (op 8) changes only a present one
 * and locks it first, so a refresh that locks them before reading them compares with approvals that cannot change
 * under it: what it decides about the gateways' exposure (domain/refresh-exposure.ts) holds when it commits.
 */
export async function lockPresentCapabilities(db: Queryable, serverId: string): Promise<void> {
  await db.query(`SELECT id FROM catalog.capabilities WHERE server_id = $1 AND gone_at IS NULL FOR UPDATE`, [serverId]);
}

/**
 * The digest of the server's present capabilities as committed now (domain/capabilities-fingerprint.ts), the value the
 * server view shows as `capabilitiesFingerprint`. A statement of its own, so that under READ COMMITTED it sees what
 * was committed before it began (a refresh this transaction waited for, say).
 */
export async function presentCapabilitiesFingerprint(db: Queryable, serverId: string): Promise<string> {
  const { rows } = await db.query<{ fingerprint: string }>(
    `SELECT ${capabilitiesFingerprintSql('c')} AS fingerprint FROM catalog.capabilities c WHERE c.server_id = $1 AND c.gone_at IS NULL`,
    [serverId],
  );
  return rows[0]!.fingerprint;
}

/** Where a page of capabilities starts: after this capability of the server. */
export type CapabilityPosition = Pick<CapabilityRow, 'id' | 'kind' | 'name'>;

/**
 * A page of the server's capabilities in list order (kind, name, id: unique, and never changed for an id), after
 * `after` when given; gone ones only when asked for. One row more than `limit` tells a next page exists. Served by
 * migration 0013's indexes (present ones have their own), so a page reads about a page of rows.
 */
export async function listCapabilityPage(
  db: Queryable,
  serverId: string,
  options: { includeGone: boolean; after: CapabilityPosition | null; limit: number },
): Promise<CapabilityRow[]> {
  const { after } = options;
  const { rows } = await db.query<CapabilityRow>(
    `SELECT ${COLUMNS} FROM catalog.capabilities
      WHERE server_id = $1 AND ($2::boolean OR gone_at IS NULL)
        AND ($3::uuid IS NULL OR (${LIST_ORDER}) > (${kindOrderOf('$4::text')}, $5::text, $3::uuid))
      ORDER BY ${LIST_ORDER} LIMIT $6`,
    [serverId, options.includeGone, after?.id ?? null, after?.kind ?? null, after?.name ?? null, options.limit + 1],
  );
  return rows;
}

/** One capability of the server, or null (another server's included). */
export async function findServerCapability(db: Queryable, serverId: string, id: string, forUpdate = false): Promise<CapabilityRow | null> {
  const { rows } = await db.query<CapabilityRow>(
    `SELECT ${COLUMNS} FROM catalog.capabilities WHERE server_id = $1 AND id = $2${forUpdate ? ' FOR UPDATE' : ''}`,
    [serverId, id],
  );
  return rows[0] ?? null;
}

/** Who approves, as recorded on the capability: the person's id (null for a non-person) and name as it is now. */
export interface Approver {
  id: string | null;
  name: string;
}

/** Approves the capability as it is now (its current fingerprint). */
export async function approveCapabilityRow(db: Queryable, id: string, approver: Approver): Promise<CapabilityRow> {
  const { rows } = await db.query<CapabilityRow>(
    `UPDATE catalog.capabilities
        SET approved_fingerprint = fingerprint, approved_at = now(), approved_by = $2, approved_by_name = $3
      WHERE id = $1 RETURNING ${COLUMNS}`,
    [id, approver.id, approver.name],
  );
  return rows[0]!;
}

/**
 * Approves every present capability of the server that is not approved as it is now (new or changed); ones
 * already approved keep their approval's time and approver. Returns how many were approved.
 */
export async function approvePresentCapabilities(db: Queryable, serverId: string, approver: Approver): Promise<number> {
  const { rowCount } = await db.query(
    `UPDATE catalog.capabilities
        SET approved_fingerprint = fingerprint, approved_at = now(), approved_by = $2, approved_by_name = $3
      WHERE server_id = $1 AND gone_at IS NULL AND approved_fingerprint IS DISTINCT FROM fingerprint`,
    [serverId, approver.id, approver.name],
  );
  return rowCount;
}

/** Capabilities stored per statement: one round trip for a typical server, bounded parameters for a huge one. */
const CAPABILITIES_PER_STATEMENT = 500;

/**
 * Stores what a discovery found, a statement per up to 500 capabilities (not one per capability: the refresh holds the
 * server's row lock meanwhile). New capabilities are inserted unapproved; seen ones get their current definition,
 * fingerprint and last_seen_at (the approved fingerprint stays, so a changed definition shows as `changed`), and
 * re-appearing ones lose gone_at. `found` names each kind and name once (discovery dedupes): one statement may not
 * update a row twice.
 */
export async function upsertCapabilities(db: Queryable, serverId: string, found: readonly DiscoveredCapability[]): Promise<void> {
  for (let start = 0; start < found.length; start += CAPABILITIES_PER_STATEMENT) {
    const rows = found.slice(start, start + CAPABILITIES_PER_STATEMENT).map((item) => ({
      id: randomUUID(),
      kind: item.kind,
      name: item.name,
      title: item.title,
      description: item.description,
      definition: item.definition,
      fingerprint: item.fingerprint,
    }));
    await db.query(
      `INSERT INTO catalog.capabilities (id, server_id, kind, name, title, description, definition, fingerprint)
       SELECT r.id, $1, r.kind, r.name, r.title, r.description, r.definition, r.fingerprint
         FROM jsonb_to_recordset($2::jsonb) AS r(id uuid, kind text, name text, title text, description text, definition jsonb, fingerprint text)
       ON CONFLICT (server_id, kind, name) DO UPDATE
         SET title = EXCLUDED.title, description = EXCLUDED.description, definition = EXCLUDED.definition,
             fingerprint = EXCLUDED.fingerprint, last_seen_at = now(), gone_at = NULL`,
      [serverId, JSON.stringify(rows)],
    );
  }
}

/** Marks the server's present capabilities with the given ids as gone. */
export async function markCapabilitiesGone(db: Queryable, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  await db.query(`UPDATE catalog.capabilities SET gone_at = now() WHERE id = ANY($1::uuid[]) AND gone_at IS NULL`, [ids]);
}

/**
 * Deletes the server's gone capabilities that were never approved beyond the `keep` most recently gone. Such a row
 * holds no decision (what comes back unapproved needs approving either way), and without a bound an upstream that
 * renames its tools at every refresh would grow the table, and every later refresh's comparison, without end.
 * Returns how many were deleted.
 */
export async function pruneGoneUnapprovedCapabilities(db: Queryable, serverId: string, keep: number): Promise<number> {
  const { rowCount } = await db.query(
    `DELETE FROM catalog.capabilities WHERE id IN (
       SELECT id FROM catalog.capabilities
        WHERE server_id = $1 AND gone_at IS NOT NULL AND approved_fingerprint IS NULL
        ORDER BY gone_at DESC, id DESC
       OFFSET $2)`,
    [serverId, keep],
  );
  return rowCount ?? 0;
}

/** The outcome of a discovery on the server row: success clears the error, failure keeps the last success time. */
export async function recordRefreshOutcome(db: Queryable, serverId: string, errorMessage: string | null): Promise<void> {
  await db.query(
    errorMessage === null
      ? `UPDATE catalog.mcp_servers SET refreshed_at = now(), last_refresh_error = NULL WHERE id = $1`
      : `UPDATE catalog.mcp_servers SET last_refresh_error = $2 WHERE id = $1`,
    errorMessage === null ? [serverId] : [serverId, errorMessage],
  );
}

/**
 * The proto view: approved = the approved fingerprint is the current one; changed = an unapproved change exists (§2.5):
 * a present capability whose current definition is not the approved one, new (never approved) or redefined. A gone
 * capability has nothing to approve (op 8 refuses it, 409 capability_gone), so it is not changed.
 */
export function toCapability(row: CapabilityRow): Capability {
  return {
    id: row.id,
    serverId: row.server_id,
    kind: row.kind,
    name: row.name,
    title: row.title,
    description: row.description,
    definitionJson: JSON.stringify(row.definition),
    fingerprint: row.fingerprint,
    approved: row.approved_fingerprint !== null && row.approved_fingerprint === row.fingerprint,
    changed: row.gone_at === null && row.approved_fingerprint !== row.fingerprint,
    approvedAt: iso(row.approved_at),
    approvedByName: row.approved_by_name ?? '',
    firstSeenAt: iso(row.first_seen_at),
    lastSeenAt: iso(row.last_seen_at),
    goneAt: iso(row.gone_at),
  };
}
