import { randomUUID } from 'node:crypto';
import type { Client } from 'pg';
import { createPostgresDatabase, type Database } from '@platform/runtime';
import { databaseOf, itOnRealInfrastructure, memoryLogger, startTestPlatform, type TestPlatform } from '@platform/test';
import { expiredGrantPruning } from '../../src/domain/oauth/pruning';

const CHUNK = 1_000;

/**
 * Pruning of expired OAuth grants (src/domain/oauth/pruning.ts): codes and tokens a day past expiry and expired
 * unused registrations go, a chunk per statement; everything else stays. The tasks run here on pools of their own,
 * as other identity replicas would, one round on demand.
 */
describe('expired OAuth grant pruning', () => {
  let platform: TestPlatform;
  let sql: Client;
  const pools: Database[] = [];
  let connectionId: string;

  beforeAll(async () => {
    platform = await startTestPlatform();
    const client = await databaseOf(platform);
    if (!client) return;
    sql = client;
    const personId = randomUUID();
    connectionId = randomUUID();
    await sql.query(`INSERT INTO identity.people (id, email, display_name) VALUES ($1, $2, 'Pruned')`, [personId, `${personId}@example.test`]);
    await sql.query(
      `INSERT INTO identity.oauth_connections (id, person_id, client_id, client_name, client_verified, gateway_id, gateway_slug, resource)
       VALUES ($1, $2, 'client', 'Client', false, $3, 'gw', 'https://example.test/mcp/gw')`,
      [connectionId, personId, randomUUID()],
    );
  }, 120_000);
  afterAll(async () => {
    await sql?.end();
    for (const pool of pools) await pool.close();
    await platform?.stop();
  });

  const task = () => {
    const db = createPostgresDatabase({ url: platform.env.DATABASE_URL!, poolMax: 2, logger: memoryLogger('pruning').logger });
    pools.push(db);
    return expiredGrantPruning({ db, logger: memoryLogger('pruning').logger }, 60_000, CHUNK);
  };

  /** `count` tokens, codes and registrations (prefixed `label`) that expire(d) `expiresIn` from now. */
  const insertGrants = async (label: string, count: number, expiresIn: string) => {
    await sql.query(
      `INSERT INTO identity.oauth_tokens (digest, connection_id, kind, generation, expires_at)
       SELECT $1 || i, $2, 'access', 1, now() + $4::interval FROM generate_series(1, $3) i`,
      [`${label}-token-`, connectionId, count, expiresIn],
    );
    await sql.query(
      `INSERT INTO identity.oauth_codes (digest, client_id, client_name, client_verified, redirect_uri, code_challenge, resource,
                                         gateway_id, gateway_slug, person_id, expires_at)
       SELECT $1 || i, 'client', 'Client', false, 'https://app.example.test/cb', 'challenge', 'https://example.test/mcp/gw',
              c.gateway_id, c.gateway_slug, c.person_id, now() + $4::interval
         FROM generate_series(1, $3) i, identity.oauth_connections c WHERE c.id = $2`,
      [`${label}-code-`, connectionId, count, expiresIn],
    );
    await sql.query(
      `INSERT INTO identity.oauth_clients (id, redirect_uris, grant_types, response_types, expires_at)
       SELECT 'svccl_' || $1 || i, '{https://app.example.test/cb}', '{authorization_code}', '{code}', now() + $3::interval
         FROM generate_series(1, $2) i`,
      [label, count, expiresIn],
    );
  };

  const remaining = async (label: string) => {
    const { rows } = await sql.query<{ tokens: number; codes: number; clients: number }>(
      `SELECT (SELECT count(*)::int FROM identity.oauth_tokens WHERE digest LIKE $1 || '-token-%') AS tokens,
              (SELECT count(*)::int FROM identity.oauth_codes WHERE digest LIKE $1 || '-code-%') AS codes,
              (SELECT count(*)::int FROM identity.oauth_clients WHERE id LIKE 'svccl\\_' || $1 || '%') AS clients`,
      [label],
    );
    return rows[0]!;
  };

  itOnRealInfrastructure('deletes every expired grant, a chunk per statement, and nothing that can still matter', async () => {
    const label = `p${Date.now().toString(36)}`;
    await insertGrants(`${label}old`, 2_500, '-2 days');
    // A code or token expired less than a day ago is kept (a replay is still recognised); a registration is not.
    await insertGrants(`${label}recent`, 10, '-1 hour');
    await insertGrants(`${label}live`, 10, '1 hour');
    await sql.query(`INSERT INTO identity.oauth_clients (id, redirect_uris, grant_types, response_types) VALUES ($1, '{}', '{}', '{}')`, [
      `svccl_${label}used`,
    ]);

    // 2,500 of each in chunks of 1,000: three claims (1,000, 1,000, 500 of each), then nothing is due.
    expect(await task().runRound()).toBe(3);
    expect(await remaining(`${label}old`)).toEqual({ tokens: 0, codes: 0, clients: 0 });
    expect(await remaining(`${label}recent`)).toEqual({ tokens: 10, codes: 10, clients: 0 });
    expect(await remaining(`${label}live`)).toEqual({ tokens: 10, codes: 10, clients: 10 });
    expect(await remaining(`${label}used`)).toEqual({ tokens: 0, codes: 0, clients: 1 });
  });

  itOnRealInfrastructure('lets replicas run at once: they skip the rows another is deleting instead of waiting or failing', async () => {
    const label = `r${Date.now().toString(36)}`;
    await insertGrants(`${label}old`, 6_000, '-2 days');
    await insertGrants(`${label}live`, 10, '1 hour');

    const claims = await Promise.all([task().runRound(), task().runRound(), task().runRound()]);
    // 6,000 of each are at least 6 chunks of 1,000, taken between them.
    expect(claims.reduce((sum, n) => sum + n, 0)).toBeGreaterThanOrEqual(6);
    expect(await remaining(`${label}old`)).toEqual({ tokens: 0, codes: 0, clients: 0 });
    expect(await remaining(`${label}live`)).toEqual({ tokens: 10, codes: 10, clients: 10 });
  });
});
