import { z } from 'zod';
import type { ApiKey } from '@platform/proto/gen/platform/identity/v1/identity';
import { apiKeyKindName } from '../auth/roles';
import { orNull, timestamp, uuid } from './common';

export const API_KEY_SCOPES = ['query', 'ingest', 'manage'] as const;

/** An API key as listed: a hint of its secret, never the secret or its digest (§2.0, §5.1). */
export const apiKeySchema = z
  .object({
    id: z.string().meta({ description: 'The public `<id>` part of `rag_<id>_<secret>`.' }),
    teamId: uuid,
    name: z.string(),
    kind: z.enum(['personal', 'service']).meta({ description: '`personal` acts as its person; `service` as the team or its service account.' }),
    scopes: z.array(z.enum(API_KEY_SCOPES)),
    knowledgeBaseIds: z.array(uuid).meta({ description: 'When not empty, the only knowledge bases the key reaches.' }),
    agentIds: z.array(uuid).meta({ description: 'When not empty, the only agents the key reaches.' }),
    hint: z.string().meta({ description: 'The last 4 characters of the secret.' }),
    personId: uuid.nullable(),
    personName: z.string().nullable(),
    serviceAccountId: uuid.nullable(),
    status: z.enum(['active', 'revoked', 'expired']),
    expiresAt: timestamp.nullable(),
    revokedAt: timestamp.nullable(),
    lastUsedAt: timestamp.nullable(),
    createdByName: z.string().nullable(),
    createdAt: timestamp,
  })
  .meta({ id: 'ApiKey' });

export type ApiKeyJson = z.infer<typeof apiKeySchema>;

/** The creation response: the key plus, this once, the full key. */
export const createdApiKeySchema = apiKeySchema
  .extend({ key: z.string().meta({ description: 'The full key `rag_<id>_<secret>`: shown in this response only, never again.' }) })
  .meta({ id: 'CreatedApiKey' });

export function presentApiKey(key: ApiKey): ApiKeyJson {
  return {
    id: key.id,
    teamId: key.teamId,
    name: key.name,
    kind: apiKeyKindName(key.kind),
    scopes: key.scopes as ApiKeyJson['scopes'],
    knowledgeBaseIds: key.knowledgeBaseIds,
    agentIds: key.agentIds,
    hint: key.hint,
    personId: orNull(key.personId),
    personName: orNull(key.personName),
    serviceAccountId: orNull(key.serviceAccountId),
    status: key.status as ApiKeyJson['status'],
    expiresAt: orNull(key.expiresAt),
    revokedAt: orNull(key.revokedAt),
    lastUsedAt: orNull(key.lastUsedAt),
    createdByName: orNull(key.createdByName),
    createdAt: key.createdAt ?? '',
  };
}
