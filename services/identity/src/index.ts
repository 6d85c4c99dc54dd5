import path from 'node:path';
import { defineService } from '@platform/runtime';
import { IdentityServiceService } from '@platform/proto/gen/platform/identity/v1/identity';
import { createIdentityServiceHandlers } from './grpc/handlers';

/** People, teams and memberships, sign-in sessions, API keys, service accounts, the audit log and maintenance mode; also the OAuth 2.1 authorization server's clients, consents and tokens. */
export const identityService = defineService({
  name: 'identity',
  grpc: { definition: IdentityServiceService, fullName: 'platform.identity.v1.IdentityService' },
  migrationsDir: path.join(__dirname, 'store', 'migrations'),
  create: (context) => ({ handlers: createIdentityServiceHandlers(context) }),
});
