import type { McpServerRow } from './mcp-servers-mappers';

/**
 * What decides which upstream the platform reaches for a server and as whom: the URL, the transport and the static
 * headers it sends (the credential and the further headers, compared sealed). A discovery or health check measures
 * one connection; when any of these changes while it runs, what it found says nothing about the server as it is now.
 */
export type UpstreamConnection = Pick<McpServerRow, (typeof CONNECTION_COLUMNS)[number]>;

const CONNECTION_COLUMNS = ['url', 'transport', 'auth_header_name', 'auth_value_sealed', 'headers_sealed'] as const;

export function sameUpstreamConnection(a: UpstreamConnection, b: UpstreamConnection): boolean {
  return CONNECTION_COLUMNS.every((column) => a[column] === b[column]);
}

/** A WHERE condition on `catalog.mcp_servers`: the row still connects as `probed` does; its values bound from `$first`. */
export function stillConnectsAs(probed: UpstreamConnection, first: number): { condition: string; values: unknown[] } {
  return {
    condition: CONNECTION_COLUMNS.map((column, index) => `${column} IS NOT DISTINCT FROM $${first + index}`).join(' AND '),
    values: CONNECTION_COLUMNS.map((column) => probed[column]),
  };
}

/**
 * An SQL condition for an UPDATE of `catalog.mcp_servers`: the new values (SQL expressions per column, seeing the row
 * before the update) change its connection. Columns the UPDATE leaves alone are not named.
 */
export function connectionChanges(next: Partial<Record<keyof UpstreamConnection, string>>): string {
  const changes = CONNECTION_COLUMNS.filter((column) => next[column] !== undefined).map((column) => `${column} IS DISTINCT FROM ${next[column]}`);
  return `(${changes.join(' OR ')})`;
}
