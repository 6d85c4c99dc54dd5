import type { Queryable } from '@platform/runtime';

/** Dynamic registrations, the trusted-client list and remembered consents (identity.oauth_*). */

export interface RegisteredClientRow {
  id: string;
  client_name: string;
  client_uri: string;
  logo_uri: string;
  redirect_uris: string[];
  grant_types: string[];
  response_types: string[];
  registered_at: Date;
}

export interface NewRegisteredClient {
  id: string;
  clientName: string;
  clientUri: string;
  logoUri: string;
  redirectUris: string[];
  grantTypes: string[];
  responseTypes: string[];
  unusedTtlSeconds: number;
}

export async function insertRegisteredClient(db: Queryable, client: NewRegisteredClient): Promise<RegisteredClientRow> {
  const { rows } = await db.query<RegisteredClientRow>(
    `INSERT INTO identity.oauth_clients (id, client_name, client_uri, logo_uri, redirect_uris, grant_types, response_types, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, now() + make_interval(secs => $8))
     RETURNING id, client_name, client_uri, logo_uri, redirect_uris, grant_types, response_types, registered_at`,
    [client.id, client.clientName, client.clientUri, client.logoUri, client.redirectUris, client.grantTypes, client.responseTypes, client.unusedTtlSeconds],
  );
  return rows[0]!;
}

/** A registration that has not expired (unused for 30 days); null otherwise. */
export async function findLiveRegisteredClient(db: Queryable, id: string): Promise<RegisteredClientRow | null> {
  const { rows } = await db.query<RegisteredClientRow>(
    `SELECT id, client_name, client_uri, logo_uri, redirect_uris, grant_types, response_types, registered_at
       FROM identity.oauth_clients
      WHERE id = $1 AND (expires_at IS NULL OR expires_at > now())`,
    [id],
  );
  return rows[0] ?? null;
}

/** A code was issued for the client: it is in use and never expires from now on. */
export async function markRegisteredClientUsed(db: Queryable, id: string): Promise<void> {
  await db.query('UPDATE identity.oauth_clients SET last_used_at = now(), expires_at = NULL WHERE id = $1', [id]);
}

export async function listTrustedClientIds(db: Queryable): Promise<string[]> {
  const { rows } = await db.query<{ client_id: string }>('SELECT client_id FROM identity.oauth_trusted_clients ORDER BY client_id');
  return rows.map((row) => row.client_id);
}

export async function isTrustedClient(db: Queryable, clientId: string): Promise<boolean> {
  const { rows } = await db.query('SELECT 1 FROM identity.oauth_trusted_clients WHERE client_id = $1', [clientId]);
  return rows.length > 0;
}

/** Replaces the whole list. */
export async function replaceTrustedClients(db: Queryable, clientIds: readonly string[]): Promise<void> {
  await db.query('DELETE FROM identity.oauth_trusted_clients WHERE NOT (client_id = ANY($1::text[]))', [clientIds]);
  if (clientIds.length > 0) {
    await db.query(
      'INSERT INTO identity.oauth_trusted_clients (client_id) SELECT unnest($1::text[]) ON CONFLICT (client_id) DO NOTHING',
      [clientIds],
    );
  }
}

export async function consentRemembered(db: Queryable, personId: string, clientId: string, gatewayId: string): Promise<boolean> {
  const { rows } = await db.query(
    'SELECT 1 FROM identity.oauth_consents WHERE person_id = $1 AND client_id = $2 AND gateway_id = $3',
    [personId, clientId, gatewayId],
  );
  return rows.length > 0;
}

export async function rememberConsent(db: Queryable, personId: string, clientId: string, gatewayId: string): Promise<void> {
  await db.query(
    `INSERT INTO identity.oauth_consents (person_id, client_id, gateway_id) VALUES ($1, $2, $3)
     ON CONFLICT (person_id, client_id, gateway_id) DO UPDATE SET granted_at = now()`,
    [personId, clientId, gatewayId],
  );
}

/** Forgets a remembered consent (a disconnected app must ask again). */
export async function forgetConsent(db: Queryable, personId: string, clientId: string, gatewayId: string): Promise<void> {
  await db.query('DELETE FROM identity.oauth_consents WHERE person_id = $1 AND client_id = $2 AND gateway_id = $3', [personId, clientId, gatewayId]);
}
