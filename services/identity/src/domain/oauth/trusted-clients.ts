import type { ListTrustedClientsResponse, SetTrustedClientsRequest } from '@platform/proto/gen/platform/identity/v1/oauth';
import { AppError, auditContext, MAX_TRUSTED_CLIENTS, type FieldError } from '@platform/runtime';
import type { IdentityDeps } from '../../deps';
import { listTrustedClientIds, replaceTrustedClients } from '../../store/oauth-clients-store';
import { writeOAuthAudit } from './audit';
import { clientIdUrlProblem } from './validation';

export async function listTrustedClients(deps: IdentityDeps): Promise<ListTrustedClientsResponse> {
  return { clientIds: await listTrustedClientIds(deps.db) };
}

/**
 * Replaces the platform admins' list of trusted clients: client metadata document URLs only (a dynamically
 * registered client can never be trusted), at most MAX_TRUSTED_CLIENTS (200; the edge refuses more with the same
 * constant). Audited with the list before and after.
 */
export async function setTrustedClients(deps: IdentityDeps, request: SetTrustedClientsRequest): Promise<ListTrustedClientsResponse> {
  const problems: FieldError[] = [];
  if (request.clientIds.length > MAX_TRUSTED_CLIENTS) problems.push({ field: 'clientIds', problem: `must list at most ${MAX_TRUSTED_CLIENTS} clients` });
  request.clientIds.forEach((id, index) => {
    const problem = clientIdUrlProblem(id);
    if (problem) problems.push({ field: `clientIds[${index}]`, problem: `${problem} (a client metadata document URL)` });
  });
  if (problems.length > 0) throw AppError.invalid('Invalid trusted clients', problems);
  const wanted = [...new Set(request.clientIds)].sort();
  return deps.db.transaction(async (tx) => {
    const before = await listTrustedClientIds(tx);
    await replaceTrustedClients(tx, wanted);
    if (before.join('\n') !== wanted.join('\n')) {
      await writeOAuthAudit(tx, {
        ...auditContext(request.context),
        action: 'oauth.trusted_clients_update',
        target: { type: 'oauth_trusted_clients', id: 'trusted_clients', label: 'Trusted OAuth clients' },
        before: { clientIds: before },
        after: { clientIds: wanted },
      });
    }
    return { clientIds: wanted };
  });
}
