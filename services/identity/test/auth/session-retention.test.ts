import { randomUUID } from 'node:crypto';
import type { Client } from 'pg';
import { createPostgresDatabase, type Database } from '@platform/runtime';
import { adminClient, databaseOf, itOnRealInfrastructure, memoryLogger, newPerson, startTestPlatform, type TestPerson, type TestPlatform } from '@platform/test';
import { sessionRetention } from '../../src/domain/session-retention';
import { deleteSessionsPastRetention } from '../../src/store/sessions-store';
import { planOf } from '../plan';

const CHUNK = 1_000;

/**
 * SESSION_RETENTION_DAYS: sessions that expired or were ended longer ago than the retention are deleted by identity's
 * hourly task, in chunks; live ones and recently over ones stay. The task runs here on a pool of its own (as another
 * identity replica would), one round on demand.
 */
describe('session retention', () => {
  let platform: TestPlatform;
  let sql: Client;
  let db: Database;
  let person: TestPerson;

  beforeAll(async () => {
    platform = await startTestPlatform({ env: { SESSION_RETENTION_DAYS: '30' } });
    person = await newPerson(platform, await adminClient(platform), 'kept');
    const client = await databaseOf(platform);
    if (!client) return;
    sql = client;
    db = createPostgresDatabase({ url: platform.env.DATABASE_URL!, poolMax: 2, logger: memoryLogger('retention').logger });
  }, 120_000);
  afterAll(async () => {
    await sql?.end();
    await db?.close();
    await platform?.stop();
  });

  /** `count` sessions of the person, labelled by user agent, created 60 days ago, expiring and ended as given. */
  const insertSessions = async (label: string, count: number, expiresAt: string, endedAt: string | null) => {
    await sql.query(
      `INSERT INTO identity.sessions (id, token_digest, person_id, user_agent, created_at, last_seen_at, expires_at, ended_at)
       SELECT gen_random_uuid(), $1 || i, $2, $3, now() - interval '60 days', now() - interval '60 days', now() + $4::interval, now() + $5::interval
         FROM generate_series(1, $6) i`,
      [`${label}-${randomUUID()}-`, person.id, label, expiresAt, endedAt, count],
    );
  };
  /** How many of the inserted sessions are left, by label. */
  const remaining = async () => {
    const { rows } = await sql.query<{ user_agent: string; count: number }>(
      `SELECT user_agent, count(*)::int AS count FROM identity.sessions
        WHERE person_id = $1 AND created_at < now() - interval '59 days' GROUP BY user_agent`,
      [person.id],
    );
    return Object.fromEntries(rows.map((row) => [row.user_agent, row.count]));
  };

  itOnRealInfrastructure('deletes, in chunks, only the sessions over for longer than the retention', async () => {
    await insertSessions('expired-40-days-ago', 2_497, '-40 days', null);
    await insertSessions('ended-31-days-ago', 2, '-30 days 12 hours', '-31 days');
    // Ended long ago though its expiry is still ahead: over since it was ended.
    await insertSessions('ended-31-days-ago-expiring-later', 1, '60 days', '-31 days');
    await insertSessions('expired-29-days-ago', 3, '-29 days', null);
    await insertSessions('ended-10-days-ago', 3, '-9 days', '-10 days');
    // Created long ago, but live (a long SESSION_TTL).
    await insertSessions('live', 3, '1 day', null);

    // 2,500 due in chunks of 1,000: three claims, then nothing is due.
    const task = sessionRetention({ db, logger: memoryLogger('retention').logger, config: platform.platform.context.config }, 60_000, CHUNK);
    expect(await task!.runRound()).toBe(3);
    expect(await remaining()).toEqual({ 'expired-29-days-ago': 3, 'ended-10-days-ago': 3, live: 3 });
    // The person's own sign-in session still works.
    expect((await person.client.get('/v1/me')).status).toBe(200);
  });

  itOnRealInfrastructure('finds the sessions past the retention through an index', async () => {
    expect(await planOf(sql, (explaining) => deleteSessionsPastRetention(explaining, 30, CHUNK))).toContain('sessions_over_at');
  });

  it('keeps sessions for ever with 0', () => {
    const { config, logger } = platform.platform.context;
    expect(sessionRetention({ db, logger, config: { ...config, env: { ...config.env, SESSION_RETENTION_DAYS: 0 } } })).toBeNull();
  });
});
