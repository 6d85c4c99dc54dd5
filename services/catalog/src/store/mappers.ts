import type { Gateway } from '@platform/proto/gen/platform/catalog/v1/catalog';

/** Rows as the adapters return them: bigint as string, timestamps as Date. */
export interface GatewayRow {
  id: string;
  team_id: string;
  slug: string;
  name: string;
  enabled: boolean;
  revision: string;
  created_by: string | null;
  created_at: Date;
  updated_at: Date;
}

export const iso = (value: Date | null | undefined): string | undefined => (value ? value.toISOString() : undefined);

export function toGateway(row: GatewayRow): Gateway {
  return {
    id: row.id,
    teamId: row.team_id,
    slug: row.slug,
    name: row.name,
    enabled: row.enabled,
    revision: row.revision,
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
    servers: [],
  };
}
