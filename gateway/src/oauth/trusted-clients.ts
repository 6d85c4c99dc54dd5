import { z } from 'zod';
import { MAX_TRUSTED_CLIENTS } from '@platform/runtime';
import { requestContextOf } from '../auth/caller';
import type { EdgeDeps } from '../edge-deps';
import { presentTrustedClients, trustedClientsSchema } from '../presenters/connection';
import { defineRoute, type AnyRouteDefinition } from '../route';

/** A client metadata document URL: https, at most 2048 characters (identity checks the rest). */
const clientMetadataUrl = z
  .string()
  .max(2048)
  .refine((value) => {
    try {
      return new URL(value).protocol === 'https:';
    } catch {
      return false;
    }
  }, 'must be an https URL (a client metadata document; dynamically registered clients can never be trusted)');

/** The trusted-client list: clients on it skip the consent page (audited `oauth.consent` how=trusted). */
export function trustedClientRoutes(deps: EdgeDeps): AnyRouteDefinition[] {
  const identity = () => deps.clients.identity;
  return [
    defineRoute({
      method: 'get',
      path: '/v1/admin/oauth/trusted-clients',
      operationId: 'listTrustedClients',
      summary: 'List the trusted OAuth clients (metadata document URLs)',
      tags: ['oauth'],
      auth: { callers: 'platform admins and auditors', platform: ['admin', 'auditor'] },
      responses: { 200: { description: 'The trusted clients', schema: trustedClientsSchema } },
      handler: async () => ({ data: presentTrustedClients(await identity().listTrustedClients({})) }),
    }),
    defineRoute({
      method: 'put',
      path: '/v1/admin/oauth/trusted-clients',
      operationId: 'setTrustedClients',
      summary: 'Replace the trusted OAuth clients',
      description: 'Clients on the list skip the consent page. Only client metadata document URLs can be trusted.',
      tags: ['oauth'],
      auth: { callers: 'platform admins', platform: ['admin'] },
      request: { body: z.object({ clientIds: z.array(clientMetadataUrl).max(MAX_TRUSTED_CLIENTS) }) },
      responses: {
        200: { description: 'The trusted clients after the change', schema: trustedClientsSchema },
        400: { description: `A client id that is not an https URL, or more than ${MAX_TRUSTED_CLIENTS} of them` },
      },
      handler: async (ctx) => ({
        data: presentTrustedClients(await identity().setTrustedClients({ context: requestContextOf(ctx), clientIds: ctx.body.clientIds })),
      }),
    }),
  ];
}
