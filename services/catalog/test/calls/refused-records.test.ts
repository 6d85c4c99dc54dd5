import { randomUUID } from 'node:crypto';
import type { Client } from 'pg';
import { createCallRecorder, type CallRecorder, type McpCallEvent } from '@platform/gateway';
import { createEventBus, createPostgresDatabase, TOPICS, type Database, type DomainEvent, type EventBus } from '@platform/runtime';
import {
  adminClient, databaseOf, describeWith, eventually, memoryLogger, newPerson, newTeam, startTestPlatform, unique, type TestPerson, type TestPlatform,
} from '@platform/test';
import { storeCallEvents } from '../../src/domain/call-event';
import { callEvent } from './fixtures';

interface CallJson {
  id: number;
  requestId: string;
  principal: Record<string, unknown>;
}

/**
 * Call records on PostgreSQL itself: a record the database refuses for its data is skipped, alone, instead of
 * failing its batch on every delivery and holding up the partition behind it; a failure of the database (not of the
 * data) is still retried until the batch is stored. The refusals are made by a trigger on `catalog.call_records`
 * that this test installs (records are marked by their request id), as a value no check foresaw would be refused.
 * Also the service account of a record, found by its team's id after the team's slug changes hands.
 */
describeWith('postgres', 'call records the database refuses', () => {
  let platform: TestPlatform;
  let bus: EventBus;
  let recorder: CallRecorder;
  let sql: Client;
  let db: Database;
  let owner: TestPerson;
  let team: { slug: string; id: string };

  beforeAll(async () => {
    platform = await startTestPlatform();
    bus = createEventBus(platform.platform.context.config.bus, memoryLogger('edge').logger);
    recorder = createCallRecorder({ bus, logger: memoryLogger('recorder').logger });
    const admin = await adminClient(platform);
    owner = await newPerson(platform, admin, 'owner');
    const slug = await newTeam(admin, owner);
    team = { slug, id: (await admin.get(`/v1/teams/${slug}`)).body.data.id as string };
    sql = await databaseOf(platform, { required: true });
    db = createPostgresDatabase({ url: platform.env.DATABASE_URL!, poolMax: 2, logger: platform.platform.context.logger });
    // 22023 (invalid_parameter_value) is a data exception, as a NUL in text is; 57P03 (cannot_connect_now) is not.
    // The attempts are counted by a sequence, which a rolled-back transaction does not undo.
    await sql.query(`
      CREATE SCHEMA calls_test;
      CREATE TABLE calls_test.database_down (down boolean PRIMARY KEY);
      CREATE SEQUENCE calls_test.attempts_while_down;
      CREATE FUNCTION calls_test.refuse_marked() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.request_id LIKE 'refuse-%' THEN
          RAISE EXCEPTION 'refused by the test' USING ERRCODE = '22023';
        END IF;
        IF NEW.request_id LIKE 'while-down-%' AND EXISTS (SELECT 1 FROM calls_test.database_down) THEN
          PERFORM nextval('calls_test.attempts_while_down');
          RAISE EXCEPTION 'down for the test' USING ERRCODE = '57P03';
        END IF;
        RETURN NEW;
      END $$;
      CREATE TRIGGER refuse_marked BEFORE INSERT ON catalog.call_records FOR EACH ROW EXECUTE FUNCTION calls_test.refuse_marked();
    `);
  }, 120_000);
  afterAll(async () => {
    await sql?.end();
    await db?.close();
    await bus?.close();
    await platform?.stop();
  });

  const listed = async (teamRef = team.slug): Promise<CallJson[]> =>
    (await owner.client.get(`/v1/teams/${teamRef}/calls?limit=200`)).body.data as CallJson[];
  const call = (overrides: Partial<McpCallEvent> = {}) => callEvent(team.id, { principal: { kind: 'user', userId: owner.id }, ...overrides });
  const refusedCall = () => call({ requestId: `refuse-${randomUUID()}` });

  /** An `mcp.call-batch` event of one group holding these calls, each with its own event id. */
  function batchEvent(calls: McpCallEvent[]): DomainEvent<unknown> & { callIds: string[] } {
    const { teamId, gateway, server, principal, clientName } = calls[0]!;
    const callIds = calls.map(() => randomUUID());
    const own = calls.map(({ teamId: _t, gateway: _g, server: _s, principal: _p, clientName: _c, ...rest }, index) => ({ id: callIds[index], ...rest }));
    const data = { groups: [{ context: { teamId, gateway, server, principal, clientName }, calls: own }] };
    return { id: randomUUID(), type: 'mcp.call-batch', source: 'gateway', occurredAt: new Date().toISOString(), data, callIds };
  }
  // Keyed by the team: one partition, so the consumer meets the messages in publishing order.
  const message = (event: DomainEvent<unknown>) => ({ topic: TOPICS.calls, key: team.id, value: JSON.stringify(event), headers: {} });

  it('skips only the record the database refuses for its data, storing the records beside it and after it', async () => {
    const [before, refused, after, later] = [call(), refusedCall(), call(), call()];
    await bus.publish([message(batchEvent([before, refused, after])), message(batchEvent([later]))]);

    const ids = await eventually(async () => (await listed()).map((found) => found.requestId), (found) => found.includes(later.requestId));
    expect(ids).toEqual(expect.arrayContaining([before.requestId, after.requestId, later.requestId]));
    expect(ids).not.toContain(refused.requestId);
  });

  it('logs a refused record by its event id and its SQLSTATE only, storing the rest of its batch', async () => {
    const { logger, lines, text } = memoryLogger('consumer');
    const secret = `payload-${randomUUID()}`;
    const calls = [call(), call(), refusedCall(), call(), call()];
    calls[2]!.payloads = { request: secret, response: secret };
    const event = batchEvent(calls);
    await db.transaction((tx) => storeCallEvents(tx, [event], logger));

    const { rows } = await sql.query<{ request_id: string }>('SELECT request_id FROM catalog.call_records WHERE request_id = ANY($1)', [calls.map((c) => c.requestId)]);
    expect(rows.map((row) => row.request_id).sort()).toEqual(calls.filter((_, index) => index !== 2).map((c) => c.requestId).sort());
    expect(lines.filter((line) => line.sqlstate)).toEqual([expect.objectContaining({ eventId: event.callIds[2], sqlstate: '22023', level: 'warn' })]);
    expect(text()).not.toContain(secret);
  });

  it('keeps retrying a batch the database fails for another reason than its data, and stores it once the database is back', async () => {
    const attempts = async (): Promise<number> => {
      const { rows } = await sql.query<{ count: string }>('SELECT CASE WHEN is_called THEN last_value ELSE 0 END AS count FROM calls_test.attempts_while_down');
      return Number(rows[0]!.count);
    };
    const waiting = call({ requestId: `while-down-${randomUUID()}` });
    await sql.query('INSERT INTO calls_test.database_down VALUES (true)');
    try {
      const first = await attempts();
      await bus.publish([message(batchEvent([waiting]))]);
      // Delivered again and again, never skipped.
      await eventually(attempts, (count) => count >= first + 3);
      expect((await listed()).map((found) => found.requestId)).not.toContain(waiting.requestId);
    } finally {
      await sql.query('DELETE FROM calls_test.database_down');
    }
    await eventually(async () => (await listed()).map((found) => found.requestId), (ids) => ids.includes(waiting.requestId));
  });

  it("finds a record's service account by its team's id after the team's slug is changed and given to another team", async () => {
    const admin = await adminClient(platform);
    const otherTeam = await newTeam(admin, owner);
    const account = await owner.client.post(`/v1/teams/${team.slug}/service-accounts`, { name: unique('bot') });
    expect(account.status).toBe(201);
    const serviceAccountId = account.body.data.id as string;
    const principal = { kind: 'service_account' as const, serviceAccountId, serviceAccountTeamSlug: team.slug, displayName: account.body.data.name };
    const byId = call({ principal: { ...principal, serviceAccountTeamId: team.id } });
    // As recorded before records carried the team id: only the slug.
    const bySlug = call({ principal });
    for (const recorded of [byId, bySlug]) recorder.record(recorded);
    await recorder.flush();
    const stored = async () => {
      const found = await eventually(() => listed(team.id), (calls) => [byId, bySlug].every((c) => calls.some((f) => f.requestId === c.requestId)));
      return (recorded: McpCallEvent) => found.find((f) => f.requestId === recorded.requestId)!.principal;
    };
    // Before any change, both find the account.
    let principalOf = await stored();
    expect(principalOf(byId)).toMatchObject({ serviceAccountId, serviceAccountTeamSlug: team.slug, serviceAccountExists: true });
    expect(principalOf(bySlug)).toMatchObject({ serviceAccountId, serviceAccountExists: true });

    // The team's slug changes, and the other team takes the old one.
    const oldSlug = team.slug;
    await sql.query('UPDATE identity.teams SET slug = $1 WHERE id = $2', [unique('renamed'), team.id]);
    await sql.query('UPDATE identity.teams SET slug = $1 WHERE slug = $2', [oldSlug, otherTeam]);

    principalOf = await stored();
    // The slug stays as recorded; the account is still found in its own team.
    expect(principalOf(byId)).toMatchObject({ serviceAccountId, serviceAccountTeamSlug: oldSlug, serviceAccountExists: true });

    expect((await owner.client.delete(`/v1/teams/${team.id}/service-accounts/${serviceAccountId}`)).status).toBe(204);
    principalOf = await stored();
    expect(principalOf(byId)).toMatchObject({ serviceAccountId, serviceAccountExists: false });
  });
});
