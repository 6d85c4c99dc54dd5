import { adminClient, databaseOf, itOnRealInfrastructure, startTestPlatform, type ApiClient, type TestPlatform } from '@platform/test';
import { listPeopleRows } from '../../src/store/people-admin-store';
import { planOf } from '../plan';

/**
 * The admin people search (GET /v1/admin/people?query=): a substring of the email or display name, in any letter
 * case, with `%`, `_` and `\` meaning themselves; served by trigram indexes (migration 0011), which the embedded
 * database must be able to create too.
 */
describe.each([
  ['the configured database', false],
  ['embedded PGlite', true],
])('people search on %s', (_, embedded) => {
  let platform: TestPlatform;
  let admin: ApiClient;
  const tag = `srch${Date.now().toString(36)}`;

  beforeAll(async () => {
    platform = await startTestPlatform({ embedded });
    admin = await adminClient(platform);
    const people = [
      { email: `${tag}-ada@example.test`, displayName: `Ada Fifty 50% Off` },
      { email: `${tag}-bob@example.test`, displayName: `Bob Five 500 Off` },
      { email: `${tag}_carol@example.test`, displayName: 'Carol Back a\\b Slash' },
      { email: `${tag}xcarol@example.test`, displayName: 'Dan Plain ab Slash' },
    ];
    for (const person of people) expect((await admin.post('/v1/admin/people', person)).status).toBe(201);
  }, 120_000);
  afterAll(() => platform?.stop());

  const found = async (query: string) => {
    const response = await admin.get(`/v1/admin/people?query=${encodeURIComponent(query)}&limit=200`);
    expect(response.status).toBe(200);
    return (response.body.data as { email: string }[]).map((person) => person.email.split('@')[0]);
  };

  it('finds a substring of the email in any letter case', async () => {
    expect(await found(`${tag.toUpperCase()}-ADA`)).toEqual([`${tag}-ada`]);
    expect(await found('ADA@EXAMPLE')).toEqual([`${tag}-ada`]);
    expect(await found(`${tag}`)).toHaveLength(4);
  });

  it('finds a substring of the display name in any letter case', async () => {
    expect(await found('fIFTY 50')).toEqual([`${tag}-ada`]);
    expect(await found('plain AB sl')).toEqual([`${tag}xcarol`]);
  });

  it('takes %, _ and \\ in the search text literally', async () => {
    // Unescaped, `50%` would match "500" too, `_carol` "xcarol" too, and `a\b` would mean "ab".
    expect(await found('50%')).toEqual([`${tag}-ada`]);
    expect(await found(`${tag}_carol`)).toEqual([`${tag}_carol`]);
    expect(await found('a\\b')).toEqual([`${tag}_carol`]);
    // Shorter than a trigram: the other query shape, the same escaping.
    expect(await found('%')).toEqual([`${tag}-ada`]);
    expect(await found('_')).toEqual([`${tag}_carol`]);
    expect(await found('\\')).toEqual([`${tag}_carol`]);
  });

  it('pages through the matches in email order', async () => {
    const first = await admin.get(`/v1/admin/people?query=${tag}&limit=3`);
    expect(first.body.data.map((person: { email: string }) => person.email.split('@')[0])).toEqual([`${tag}-ada`, `${tag}-bob`, `${tag}_carol`]);
    const second = await admin.get(`/v1/admin/people?query=${tag}&limit=3&cursor=${first.body.nextCursor}`);
    expect(second.body.data.map((person: { email: string }) => person.email.split('@')[0])).toEqual([`${tag}xcarol`]);
    expect(second.body.nextCursor).toBeNull();
  });

  if (embedded) return;

  itOnRealInfrastructure('looks a search of three characters or more up in the trigram indexes', async () => {
    const db = await databaseOf(platform, { required: true });
    try {
      const plan = await planOf(db, (explaining) => listPeopleRows(explaining, { afterEmail: null, limit: 50, query: 'ada' }));
      expect(plan).toContain('people_email_trigrams');
      expect(plan).toContain('people_display_name_trigrams');
    } finally {
      await db.end();
    }
  });
});
