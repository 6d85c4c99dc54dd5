import type { Client } from 'pg';
import { databaseOf, startTestPlatform, type TestPlatform } from '@platform/test';
import { planOf as planOfStatements } from '../plan';

/**
 * The statements that mark audit entries of removed things (store/audit-store.ts, markTargetGone) can use an index,
 * whatever the planner would choose on a small table: a removal must not scan the whole audit log.
 */
describe('audit entry indexes', () => {
  let platform: TestPlatform;
  let db: Client;

  beforeAll(async () => {
    platform = await startTestPlatform();
    db = await databaseOf(platform, { required: true });
  }, 120_000);
  afterAll(async () => {
    await db?.end();
    await platform?.stop();
  });

  const planOf = (statement: string, params: unknown[]) => planOfStatements(db, (explaining) => explaining.query(statement, params));

  it('finds the entries whose parent was removed through an index', async () => {
    const plan = await planOf(
      `UPDATE identity.audit_entries SET parent = jsonb_set(parent, '{exists}', 'false'::jsonb)
        WHERE parent->>'type' = $1 AND parent->>'id' = $2 AND id <= $3 AND (parent->>'exists')::boolean IS DISTINCT FROM false`,
      ['team', '00000000-0000-0000-0000-000000000000', '1'],
    );
    expect(plan).toContain('audit_entries_parent');
  });

  it('finds the entries whose target was removed through an index', async () => {
    const plan = await planOf(
      `UPDATE identity.audit_entries SET target_exists = false WHERE target_type = $1 AND target_id = $2 AND id <= $3 AND target_exists`,
      ['team', '00000000-0000-0000-0000-000000000000', '1'],
    );
    expect(plan).toContain('audit_entries_target');
  });
});
