import type { Gateway, GatewayServer } from '@platform/proto/gen/platform/catalog/v1/catalog';

/** One server of a gateway as the gateway queries aggregate it (jsonb, in gateway order). */
export interface GatewayServerJson {
  server_id: string;
  prefix: string;
  server_slug: string;
  server_name: string;
  server_team_id: string;
}

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
  servers: GatewayServerJson[];
}

export const iso = (value: Date | null | undefined): string | undefined => (value ? value.toISOString() : undefined);

export function toGatewayServer(server: GatewayServerJson): GatewayServer {
  return {
    serverId: server.server_id,
    prefix: server.prefix,
    serverSlug: server.server_slug,
    serverName: server.server_name,
    serverTeamId: server.server_team_id,
  };
}

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
    servers: row.servers.map(toGatewayServer),
  };
}
