import type { Client } from 'pg';
import { adminClient, databaseOf, eventually, newPerson, newTeam, startTestPlatform, unique, type ApiClient, type ApiResponse, type TestPerson, type TestPlatform } from '@platform/test';
import { adminPath, registerServer } from '../platform-servers/support';
import { outboxMarks, writtenSince } from './written';

/**
 * An update that alters nothing (an empty PATCH, or only the values already there) answers 200 with the resource as
 * it is: the revision does not move and no audit entry (nor event) is written, but If-Match is still checked
 * (docs/api.md, Revisions; docs/catalog.md). A real change right after is audited once, at the unmoved revision.
 */
describe('catalog updates that alter nothing', () => {
  let platform: TestPlatform;
  let db: Client;
  let admin: ApiClient;
  let owner: TestPerson;
  let team: string;

  beforeAll(async () => {
    platform = await startTestPlatform({ env: { ALLOWED_INTERNAL_NETWORKS: '127.0.0.0/8' } });
    db = await databaseOf(platform, { required: true });
    admin = await adminClient(platform);
    owner = await newPerson(platform, admin, 'owner');
    team = await newTeam(admin, owner);
  }, 120_000);
  afterAll(async () => {
    await db?.end();
    await platform?.stop();
  });

  /** Sends the PATCH and answers it with what it wrote synchronously (outbox rows, identity audit rows). */
  async function patchWriting(path: string, body: unknown, revision: number, as: ApiClient = owner.client): Promise<{ response: ApiResponse; written: string[] }> {
    const marks = await outboxMarks(db);
    const response = await as.patch(path, body, { 'if-match': `"${revision}"` });
    return { response, written: await writtenSince(db, marks, response.headers.get('x-request-id') ?? '') };
  }

  /** What a real change wrote besides its audit entry, which identity's consumer may already have stored from the outbox. */
  const besidesStoredEntry = (written: string[], action: string) => written.filter((line) => line !== `audit entry ${action}`);

  const auditOf = (action: string, targetId: string) =>
    eventually(
      async () => ((await owner.client.get(`/v1/teams/${team}/audit?action=${action}&targetId=${targetId}`)).body.data ?? []) as { before: unknown; after: unknown; metadata?: unknown }[],
      (items) => items.length >= 1,
    );

  it('an MCP server: empty PATCH, the same values, and removing a credential it does not have write nothing', async () => {
    const server = await registerServer(owner.client, team, { name: 'Same', description: 'Kept', timeoutSeconds: 7 });
    const path = `/v1/teams/${team}/mcp-servers/${server.id}`;
    for (const body of [{}, { name: 'Same', description: 'Kept', timeoutSeconds: 7, enabled: true, slug: server.slug }, { name: '  Same  ' }, { authValue: '' }]) {
      const { response, written } = await patchWriting(path, body, 1);
      expect([JSON.stringify(body), response.status, response.body.data?.revision, response.headers.get('etag')]).toEqual([JSON.stringify(body), 200, 1, '"1"']);
      expect([JSON.stringify(body), written]).toEqual([JSON.stringify(body), []]);
    }
    // If-Match is still checked.
    expect((await patchWriting(path, {}, 2)).response.status).toBe(412);

    // A credential given is always a change (never compared with the stored one); a real change is audited once.
    const { response: withCredential, written } = await patchWriting(path, { authValue: 'a-long-upstream-secret-0001' }, 1);
    expect(withCredential.body.data).toMatchObject({ revision: 2, hasAuth: true });
    expect(besidesStoredEntry(written, 'mcp_server.update')).toEqual(['catalog outbox audit.v1 mcp_server.update']);
    const entries = await auditOf('mcp_server.update', server.id);
    expect(entries).toHaveLength(1);
    const [entry] = entries;
    expect(JSON.stringify(entry)).not.toContain('a-long-upstream-secret-0001');
    expect(entry).toMatchObject({ before: { hasAuth: false }, after: { hasAuth: true, authValueChanged: true } });
  });

  it('op 16: empty PATCH, the same values and teams, and removing headers a server does not have write nothing', async () => {
    const server = await registerServer(owner.client, team, { name: 'Admin same', description: 'Kept' });
    const path = adminPath(server.id);
    const url = (await admin.get(path)).body.data.url as string;
    for (const body of [{}, { name: 'Admin same', description: 'Kept', url, enabled: true }, { headers: {} }, { teams: [team], accessMode: 'proxy', personal: false }]) {
      const { response, written } = await patchWriting(path, body, 1, admin);
      expect([JSON.stringify(body), response.status, response.body.data?.revision, response.headers.get('etag')]).toEqual([JSON.stringify(body), 200, 1, '"1"']);
      expect([JSON.stringify(body), written]).toEqual([JSON.stringify(body), []]);
    }
    expect((await patchWriting(path, {}, 2, admin)).response.status).toBe(412);

    // Headers given are always a change; audited once, naming just that.
    const { response, written } = await patchWriting(path, { headers: { 'x-api-key': 'an-admin-upstream-secret-0001' } }, 1, admin);
    expect(response.body.data).toMatchObject({ revision: 2, hasHeaders: true });
    expect(besidesStoredEntry(written, 'mcp_server.admin_update')).toEqual(['catalog outbox audit.v1 mcp_server.admin_update']);
    const entries = await auditOf('mcp_server.admin_update', server.id);
    expect(entries).toHaveLength(1);
    expect(entries[0]!.metadata).toEqual({ changed: ['headers'] });
    expect(JSON.stringify(entries)).not.toContain('an-admin-upstream-secret-0001');
  });

  it('a gateway: empty PATCH, the same values and the same server list write nothing', async () => {
    const server = await registerServer(owner.client, team);
    // A draft server cannot be put in a gateway; a self_publish team's owner publishes it at once.
    expect((await admin.put(`/v1/admin/teams/${team}/publishing`, { override: 'self_publish' }, { 'if-match': `"${(await admin.get(`/v1/admin/teams/${team}/publishing`)).body.data.revision}"` })).status).toBe(200);
    expect((await owner.client.post(`/v1/teams/${team}/mcp-servers/${server.id}/publish`)).status).toBe(200);
    const slug = unique('gw');
    const created = await owner.client.post(`/v1/teams/${team}/gateways`, { slug, name: 'Tools', servers: [{ serverId: server.id, prefix: 'p' }] });
    expect(created.status).toBe(201);
    const path = `/v1/teams/${team}/gateways/${created.body.data.id}`;
    for (const body of [{}, { slug, name: ' Tools ', enabled: true }, { servers: [{ serverId: server.id, prefix: 'p' }] }]) {
      const { response, written } = await patchWriting(path, body, 1);
      expect([JSON.stringify(body), response.status, response.body.data?.revision, response.headers.get('etag')]).toEqual([JSON.stringify(body), 200, 1, '"1"']);
      expect([JSON.stringify(body), written]).toEqual([JSON.stringify(body), []]);
    }
    expect((await patchWriting(path, {}, 2)).response.status).toBe(412);

    // Another prefix is a change, audited once with just that field.
    const { response, written } = await patchWriting(path, { servers: [{ serverId: server.id, prefix: 'q' }] }, 1);
    expect(response.body.data).toMatchObject({ revision: 2, servers: [{ serverId: server.id, prefix: 'q' }] });
    expect(besidesStoredEntry(written, 'gateway.update')).toEqual(['catalog outbox audit.v1 gateway.update']);
    const entries = await auditOf('gateway.update', created.body.data.id);
    expect(entries).toHaveLength(1);
    const [entry] = entries;
    expect(entry).toMatchObject({ before: { servers: [{ serverId: server.id, prefix: 'p' }] }, after: { servers: [{ serverId: server.id, prefix: 'q' }] } });
    expect(Object.keys(entry!.after as object)).toEqual(['servers']);
  });
});
