import { randomUUID } from 'node:crypto';
import { startPlatform, type RunningPlatform } from '@platform/platform/src/platform';
import { SYSTEM_ACTOR, type AuditEventData } from '@platform/runtime';
import { ApiClient, describeWith, eventually, infraUrl, platformUrl, realInfraEnv, TEST_ADMIN } from '@platform/test';
import { commitAuditEvents, queryDatabase } from './support';

const PLATFORM_TEAM_ID = '00000000-0000-4000-8000-000000000001';

/** An audit event as a service would write it. */
function event(overrides: Partial<AuditEventData> & Pick<AuditEventData, 'action' | 'teamId'>): AuditEventData {
  return {
    actor: { ...SYSTEM_ACTOR },
    target: { type: 'widget', id: randomUUID(), label: 'A widget' },
    requestId: `req-${randomUUID()}`,
    clientIp: '203.0.113.7',
    ...overrides,
  };
}

describeWith('postgres', 'audit log', () => {
  let env: NodeJS.ProcessEnv;
  let cleanup: () => Promise<void>;
  let platform: RunningPlatform | undefined;
  let admin: ApiClient;
  let teamId: string;
  const widgetId = randomUUID();
  const crashId = `crash-${randomUUID()}`;
  let editor: ApiClient;

  const client = (running: RunningPlatform) => ({ url: (path: string) => platformUrl(running, path), origin: running.context.config.env.APP_URL.replace(/\/$/, '') });

  beforeAll(async () => {
    const infra = await realInfraEnv({ postgres: infraUrl('postgres')!, redis: infraUrl('redis')!, kafka: infraUrl('kafka')! });
    cleanup = infra.cleanup;
    env = { ...infra.env, BOOTSTRAP_ADMIN_EMAIL: TEST_ADMIN.email, BOOTSTRAP_ADMIN_PASSWORD: TEST_ADMIN.password };

    // First life: migrations, the admin, a team with an editor.
    platform = await startPlatform({ target: 'all', env });
    admin = new ApiClient(client(platform));
    expect((await admin.signIn(TEST_ADMIN.email, TEST_ADMIN.password)).status).toBe(200);
    const team = await admin.post('/v1/teams', { slug: `audit-${Date.now()}`, name: 'Audit team' });
    expect(team.status).toBe(201);
    teamId = team.body.data.id;
    const password = 'editor password for the audit test';
    const person = await admin.post('/v1/admin/people', { email: `editor-${Date.now()}@example.test`, displayName: 'Eddie Editor', password });
    expect(person.status).toBe(201);
    expect((await admin.post(`/v1/teams/${teamId}/members`, { personId: person.body.data.id, role: 'editor' })).status).toBe(201);
    await platform.stop();
    platform = undefined;

    // While no platform runs: changes committed with their audit events, none published (a crash after commit).
    await commitAuditEvents(env.DATABASE_URL!, [
      event({ teamId, action: 'widget.create', target: { type: 'widget', id: widgetId, label: 'Blue widget' }, after: { colour: 'blue' } }),
      event({
        teamId,
        action: 'widget.update',
        target: { type: 'widget', id: widgetId, label: 'Blue widget' },
        before: { colour: 'blue' },
        after: { colour: 'green', password: 'hunter2-should-vanish' },
        metadata: { note: 'key rag_abcdefgh_0123456789abcdef0123 pasted by mistake' },
      }),
      event({ teamId, action: 'costs.report_export', metadata: { rows: 10 } }),
      event({ teamId, action: 'gadget.attach', parent: { type: 'widget', id: widgetId, label: 'Blue widget' } }),
      event({ teamId, action: 'widget.delete', target: { type: 'widget', id: widgetId, label: 'Blue widget' } }),
      event({ teamId: PLATFORM_TEAM_ID, action: 'platform.crash_test', target: { type: 'test', id: crashId, label: 'survivor' } }),
    ]);

    // Second life on the same database: the relay publishes what was left, the consumer stores it.
    platform = await startPlatform({ target: 'all', env });
    admin = new ApiClient(client(platform));
    expect((await admin.signIn(TEST_ADMIN.email, TEST_ADMIN.password)).status).toBe(200);
    editor = new ApiClient(client(platform));
    expect((await editor.signIn(person.body.data.email, password)).status).toBe(200);
  }, 120_000);

  afterAll(async () => {
    await platform?.stop();
    await cleanup?.();
  });

  it("stores the identity service's own entries with the change they record, not through the bus", async () => {
    // team.create and team.member_add of the first life, which stopped at once after them: stored, each once.
    const rows = await queryDatabase<{ action: string }>(
      env.DATABASE_URL!,
      `SELECT action FROM identity.audit_entries WHERE team_id = $1 AND action IN ('team.create', 'team.member_add') ORDER BY id`,
      [teamId],
    );
    expect(rows.map((row) => row.action)).toEqual(['team.create', 'team.member_add']);
    const published = await queryDatabase<{ n: number }>(
      env.DATABASE_URL!,
      `SELECT count(*)::int AS n FROM identity.outbox WHERE topic = 'audit.v1' AND payload->>'type' IN ('team.create', 'team.member_add')`,
    );
    expect(published[0]!.n).toBe(0);
  });

  it('an audit event committed before a crash appears once the platform is back, exactly once', async () => {
    const found = await eventually(
      () => admin.get(`/v1/teams/platform/audit?targetType=test&targetId=${crashId}`),
      (response) => response.status === 200 && response.body.data.length > 0,
    );
    expect(found.body.data).toHaveLength(1);
    expect(found.body.data[0]).toMatchObject({ action: 'platform.crash_test', teamSlug: 'platform', actorKind: 'system' });
    // Give a duplicate delivery time to show up, then check again, through the API and in the store.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect((await admin.get(`/v1/teams/platform/audit?targetId=${crashId}`)).body.data).toHaveLength(1);
    const rows = await queryDatabase(env.DATABASE_URL!, 'SELECT id FROM identity.audit_entries WHERE target_id = $1', [crashId]);
    expect(rows).toHaveLength(1);
  });

  it('lists a team\'s entries newest first with the §2.12 fields, secrets scrubbed', async () => {
    const all = await eventually(
      () => admin.get(`/v1/teams/${teamId}/audit`),
      (response) => response.status === 200 && response.body.data.filter((e: { targetType: string }) => e.targetType !== 'team').length >= 5,
    );
    const ids = all.body.data.map((e: { id: number }) => e.id);
    expect([...ids].sort((a: number, b: number) => b - a)).toEqual(ids);
    const update = all.body.data.find((e: { action: string }) => e.action === 'widget.update');
    expect(Object.keys(update).sort()).toEqual(
      ['id', 'occurredAt', 'actorKind', 'actorUserId', 'teamId', 'teamName', 'teamSlug', 'action', 'actor', 'targetType', 'targetId',
        'targetLabel', 'targetExists', 'before', 'after', 'metadata', 'requestId', 'clientIp'].sort(),
    );
    expect(update).toMatchObject({
      teamId,
      teamName: 'Audit team',
      actorKind: 'system',
      actorUserId: null,
      actor: { kind: 'system', userId: null, displayName: null, email: null, apiKeyName: null },
      targetLabel: 'Blue widget',
      before: { colour: 'blue' },
      after: { colour: 'green', password: '[redacted]' },
      clientIp: '203.0.113.7',
    });
    expect(JSON.stringify(all.body)).not.toContain('hunter2');
    expect(JSON.stringify(all.body)).not.toContain('rag_abcdefgh_0123456789abcdef0123');
    // The deletion marks what came before it about the same target, as target and as parent.
    const aboutWidget = all.body.data.filter((e: { targetId: string }) => e.targetId === widgetId);
    expect(aboutWidget.map((e: { targetExists: boolean }) => e.targetExists)).toEqual([false, false, false]);
    const attach = all.body.data.find((e: { action: string }) => e.action === 'gadget.attach');
    expect(attach.parent).toEqual({ type: 'widget', id: widgetId, label: 'Blue widget', exists: false });
  });

  it('filters by action (exact or prefix), target, actor and time range, and pages with a cursor', async () => {
    const exact = await admin.get(`/v1/teams/${teamId}/audit?action=widget.update`);
    expect(exact.body.data.map((e: { action: string }) => e.action)).toEqual(['widget.update']);
    const prefix = await admin.get(`/v1/teams/${teamId}/audit?action=widget.`);
    expect(prefix.body.data.map((e: { action: string }) => e.action)).toEqual(['widget.delete', 'widget.update', 'widget.create']);
    const byTarget = await admin.get(`/v1/teams/${teamId}/audit?targetType=widget&targetId=${widgetId}`);
    expect(byTarget.body.data).toHaveLength(3);
    const byActor = await admin.get(`/v1/teams/${teamId}/audit?actorId=${randomUUID()}`);
    expect(byActor.body.data).toEqual([]);
    const future = new Date(Date.now() + 3_600_000).toISOString();
    expect((await admin.get(`/v1/teams/${teamId}/audit?from=${future}`)).body.data).toEqual([]);
    expect((await admin.get(`/v1/teams/${teamId}/audit?to=2000-01-01T00:00:00Z`)).body.data).toEqual([]);

    const seen: number[] = [];
    let cursor: string | null = null;
    do {
      const page: Awaited<ReturnType<ApiClient['get']>> = await admin.get(
        `/v1/teams/${teamId}/audit?limit=2${cursor ? `&cursor=${cursor}` : ''}`,
      );
      expect(page.status).toBe(200);
      expect(page.body.data.length).toBeLessThanOrEqual(2);
      seen.push(...page.body.data.map((e: { id: number }) => e.id));
      cursor = page.body.nextCursor;
    } while (cursor);
    const all = await admin.get(`/v1/teams/${teamId}/audit?limit=200`);
    expect(seen).toEqual(all.body.data.map((e: { id: number }) => e.id));
  });

  it('refuses time bounds PostgreSQL cannot read (outside years 0001 to 9999 in UTC) with 400 naming the bound', async () => {
    const cases: [string, string][] = [
      ['from=0000-01-01T00:00:00Z', 'from'],
      // Written in year 0001, but year 0 once in UTC.
      ['to=0001-01-01T00:30:00%2B01:00', 'to'],
      ['to=9999-12-31T23:59:59-05:00', 'to'],
    ];
    for (const [query, field] of cases) {
      const response = await admin.get(`/v1/teams/${teamId}/audit?${query}`);
      expect({ query, status: response.status }).toEqual({ query, status: 400 });
      expect(response.body.error.fields).toEqual([expect.objectContaining({ field })]);
    }
    expect((await admin.get(`/v1/teams/${teamId}/audit?from=0001-01-01T00:00:00Z&to=9999-12-31T23:59:59Z`)).status).toBe(200);
  });

  it('reads one entry; other teams\' ids are 404 and malformed ids 400', async () => {
    const list = await admin.get(`/v1/teams/${teamId}/audit?action=widget.update`);
    const id = list.body.data[0].id;
    const one = await admin.get(`/v1/teams/${teamId}/audit/${id}`);
    expect(one.status).toBe(200);
    expect(one.body.data).toEqual(list.body.data[0]);
    expect((await admin.get(`/v1/teams/platform/audit/${id}`)).status).toBe(404);
    expect((await admin.get(`/v1/teams/${teamId}/audit/999999999`)).status).toBe(404);
    for (const bad of ['0', 'abc', '-1', '1.5', '99999999999999999999']) {
      const response = await admin.get(`/v1/teams/${teamId}/audit/${bad}`);
      expect(response.status).toBe(400);
      expect(response.body.error.fields[0].field).toBe('entryId');
    }
    expect((await admin.get(`/v1/teams/${teamId}/audit?cursor=not-ours`)).status).toBe(400);
    expect((await admin.get(`/v1/teams/${teamId}/audit?from=yesterday`)).status).toBe(400);
  });

  it('editors read the log without cost entries, which are 404 for them; the platform log is not theirs', async () => {
    const asAdmin = await admin.get(`/v1/teams/${teamId}/audit?action=costs.`);
    expect(asAdmin.body.data).toHaveLength(1);
    const costId = asAdmin.body.data[0].id;
    expect((await admin.get(`/v1/teams/${teamId}/audit/${costId}`)).status).toBe(200);

    const asEditor = await editor.get(`/v1/teams/${teamId}/audit`);
    expect(asEditor.status).toBe(200);
    expect(asEditor.body.data.length).toBeGreaterThan(0);
    expect(asEditor.body.data.some((e: { action: string }) => e.action.startsWith('costs.'))).toBe(false);
    expect((await editor.get(`/v1/teams/${teamId}/audit/${costId}`)).status).toBe(404);
    expect((await editor.get('/v1/teams/platform/audit')).status).toBe(404);
    expect((await new ApiClient(client(platform!)).get(`/v1/teams/${teamId}/audit`)).status).toBe(401);
  });
});
