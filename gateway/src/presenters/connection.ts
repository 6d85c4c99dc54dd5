import { z } from 'zod';
import type { OAuthConnection } from '@platform/proto/gen/platform/identity/v1/oauth';
import { orNull, timestamp, uuid } from './common';

/** A connected app: one OAuth client's access to one gateway on behalf of one person. */
export const connectionSchema = z
  .object({
    id: uuid,
    personId: uuid,
    clientId: z.string().meta({ description: 'A `svccl_…` id (dynamic registration) or the https URL of the client metadata document.' }),
    clientName: z.string(),
    clientVerified: z.boolean().meta({ description: 'True for metadata-document clients; false for dynamically registered (unverified) ones.' }),
    gatewayId: uuid,
    gatewaySlug: z.string(),
    createdAt: timestamp,
    lastUsedAt: timestamp.nullable(),
  })
  .meta({ id: 'OAuthConnection' });

export type ConnectionJson = z.infer<typeof connectionSchema>;

export function presentConnection(connection: OAuthConnection): ConnectionJson {
  return {
    id: connection.id,
    personId: connection.personId,
    clientId: connection.clientId,
    clientName: connection.clientName,
    clientVerified: connection.clientVerified,
    gatewayId: connection.gatewayId,
    gatewaySlug: connection.gatewaySlug,
    createdAt: connection.createdAt ?? '',
    lastUsedAt: orNull(connection.lastUsedAt),
  };
}

/** The platform admins' list of trusted client metadata document URLs (their clients skip the consent page). */
export const trustedClientsSchema = z
  .object({
    clientIds: z.array(z.string()).meta({ description: 'Client metadata document URLs (https).' }),
  })
  .meta({ id: 'OAuthTrustedClients' });

export function presentTrustedClients(response: { clientIds: string[] }): z.infer<typeof trustedClientsSchema> {
  return { clientIds: [...response.clientIds] };
}
