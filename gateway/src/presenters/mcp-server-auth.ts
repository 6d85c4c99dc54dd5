import { z } from 'zod';
import { timestamp, uuid } from './common';

/**
 * How an MCP server authenticates upstream (spec §2.3 `authMode`, `oauth`, `requirement`). The spec leaves the modes'
 * values open; these are the platform's. OAuth modes, and the auth providers they name (§2.6), come in a later issue:
 * until then no server has `oauth` or a `requirement`, and the fields read null rather than being left out.
 */
export const AUTH_MODES = ['none', 'static'] as const;
export type AuthMode = (typeof AUTH_MODES)[number];

export const authModeSchema = z.enum(AUTH_MODES).meta({
  description:
    '`static` while a static secret is sent upstream (the same rule as `hasAuth`: the team\'s credential or headers a platform admin set); ' +
    '`none` otherwise. Later OAuth modes add values.',
});

/** `static` exactly when `hasAuth`: a server that sends a secret never reads as sending none. */
export const authModeOf = (hasAuth: boolean): AuthMode => (hasAuth ? 'static' : 'none');

// Inline, not named components: the OpenAPI generator drops `null` from a nullable reference.
const platformProviderSchema = z.object({
  id: uuid,
  slug: z.string(),
  name: z.string(),
  preset: z.string().nullable(),
  logoUrl: z.string().nullable(),
  kind: z.string(),
  server: z.object({ id: uuid, slug: z.string(), name: z.string(), teamSlug: z.string() }).nullable(),
});

const setupConnectionSchema = z.object({
  status: z.string(),
  personId: uuid.nullable(),
  personName: z.string().nullable(),
  authorizedAt: timestamp.nullable(),
});

export const serverOauthSchema = z
  .object({
    providerId: uuid.nullable(),
    providerSlug: z.string().nullable(),
    resource: z.string().nullable(),
    resourceMetadataUrl: z.string().nullable(),
    authorizationServer: z.string().nullable(),
    issuer: z.string().nullable(),
    authorizationEndpoint: z.string().nullable(),
    tokenEndpoint: z.string().nullable(),
    revocationEndpoint: z.string().nullable(),
    scopes: z.array(z.string()),
    scopesSupported: z.array(z.string()),
    registration: z.string().meta({ description: '`platform_provider` (the server links a platform auth provider) or `dcr`, among others.' }),
    clientIdHint: z.string().nullable(),
    hasClientSecret: z.boolean(),
    clientSecretExpiresAt: timestamp.nullable(),
    tokenAuthMethod: z.string().nullable(),
    sendResource: z.boolean(),
    issParameterSupported: z.boolean(),
    platformProvider: platformProviderSchema.nullable(),
    setupConnection: setupConnectionSchema.nullable(),
    connectionCount: z.number().int(),
    discoveredAt: timestamp.nullable(),
    redirectUri: z.string().meta({ description: "The service's connect-callback address." }),
  })
  .nullable()
  .meta({ description: 'For servers whose `authMode` is an OAuth mode; null otherwise (always, until OAuth modes arrive).' });

export const serverRequirementSchema = z
  .object({
    providerId: uuid,
    providerSlug: z.string(),
    providerName: z.string(),
    providerEnabled: z.boolean(),
    scopes: z.array(z.string()),
  })
  .nullable()
  .meta({
    description: 'The auth provider (§2.6) the server requires people to connect; null when none (always, until auth providers arrive).',
  });
