import { unique, type ApiClient, type ApiResponse } from '@platform/test';

/** The platform team's slug (identity's first migration): platform servers are its servers. */
export const PLATFORM_TEAM = 'platform';
// Public and resolvable without DNS: a literal address outside every refused range.
export const PUBLIC_URL = 'https://1.1.1.1/mcp';

export interface AdminServerJson {
  id: string;
  name: string;
  slug: string;
  description: string;
  url: string;
  accessMode: string;
  enabled: boolean;
  visibility: string;
  personal: boolean;
  teams: { id: string; slug: string; name: string }[];
  hasHeaders: boolean;
  tools: { name: string; title: string; description: string }[];
  toolsRefreshedAt: string | null;
  toolsError: string | null;
  team: { id: string; slug: string; name: string; kind: string };
  revision: number;
  createdAt: string;
  updatedAt: string;
}

/** Registers a server through the team routes (a platform server when `team` is the platform team). */
export async function registerServer(client: ApiClient, team: string, body: Record<string, unknown> = {}): Promise<{ id: string; slug: string }> {
  const created = await client.post(`/v1/teams/${team}/mcp-servers`, { name: 'Server', slug: unique('srv'), url: PUBLIC_URL, ...body });
  if (created.status !== 201) throw new Error(`register failed: ${created.status} ${JSON.stringify(created.body)}`);
  return { id: created.body.data.id, slug: created.body.data.slug };
}

export const adminPath = (serverId: string) => `/v1/admin/mcp-servers/${serverId}`;

/** Op 16 at the server's current revision (read first through the admin view). */
export async function adminChange(admin: ApiClient, serverId: string, body: Record<string, unknown>): Promise<ApiResponse> {
  const current = await admin.get(adminPath(serverId));
  if (current.status !== 200) throw new Error(`read failed: ${current.status} ${JSON.stringify(current.body)}`);
  return admin.patch(adminPath(serverId), body, { 'if-match': `"${current.body.data.revision}"` });
}
