import { unique, type ApiClient, type TestPerson } from '@platform/test';
import type { Upstream } from './upstream';

/**
 * Registers a team's MCP server on the upstream through the real edge and discovers its capabilities (refresh).
 * Returns its id and slug.
 */
export async function registerServer(
  owner: TestPerson,
  team: string,
  upstream: Upstream,
  fields: Record<string, unknown> = {},
): Promise<{ id: string; slug: string }> {
  const created = await owner.client.post(`/v1/teams/${team}/mcp-servers`, { name: 'Upstream', slug: unique('up'), url: upstream.url, timeoutSeconds: 5, ...fields });
  if (created.status !== 201) throw new Error(`register server failed: ${created.status} ${JSON.stringify(created.body)}`);
  await refreshServer(owner, team, created.body.data.id);
  return { id: created.body.data.id, slug: created.body.data.slug };
}

export async function refreshServer(owner: TestPerson, team: string, serverId: string): Promise<void> {
  const refreshed = await owner.client.post(`/v1/teams/${team}/mcp-servers/${serverId}/refresh`);
  if (refreshed.status !== 200) throw new Error(`refresh failed: ${refreshed.status} ${JSON.stringify(refreshed.body)}`);
}

/**
 * Publishes a server under the default policy (approval_required): the owner asks, a platform admin approves,
 * which approves its present capabilities as they are.
 */
export async function publish(owner: TestPerson, admin: ApiClient, team: string, serverId: string): Promise<void> {
  const asked = await owner.client.post(`/v1/teams/${team}/mcp-servers/${serverId}/publish`, {});
  if (asked.status !== 200) throw new Error(`publish request failed: ${asked.status} ${JSON.stringify(asked.body)}`);
  const reviewed = await admin.post(`/v1/admin/mcp-servers/${serverId}/review`, { decision: 'approve' });
  if (reviewed.status !== 200) throw new Error(`review failed: ${reviewed.status} ${JSON.stringify(reviewed.body)}`);
}

/** A platform admin approves every present capability of the server that is new or changed. */
export async function approveAll(owner: TestPerson, admin: ApiClient, team: string, serverId: string): Promise<void> {
  const listed = await owner.client.get(`/v1/teams/${team}/mcp-servers/${serverId}/capabilities`);
  for (const capability of listed.body.data as { id: string; approved: boolean }[]) {
    if (capability.approved) continue;
    const approved = await admin.put(`/v1/admin/mcp-servers/${serverId}/capabilities/${capability.id}/approval`);
    if (approved.status !== 200) throw new Error(`approval failed: ${approved.status} ${JSON.stringify(approved.body)}`);
  }
}
