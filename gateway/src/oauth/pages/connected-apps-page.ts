import type { OAuthConnection } from '@platform/proto/gen/platform/identity/v1/oauth';
import { escapeHtml, layout } from './html';

/** The person's connected apps, each with a Disconnect button (a form POST carrying the CSRF token). */
export function connectedAppsPage(options: {
  instanceName: string;
  email: string;
  connections: readonly OAuthConnection[];
  action: string;
  csrf: string;
  notice?: string | undefined;
}): string {
  const title = `Connected apps · ${escapeHtml(options.instanceName)}`;
  const notice = options.notice ? `<p role="status">${escapeHtml(options.notice)}</p>` : '';
  const rows = options.connections
    .map(
      (c) => `<tr>
<td>${escapeHtml(c.clientName || c.clientId)} <span class="badge ${c.clientVerified ? 'verified">Verified' : 'unverified">Unverified'}</span></td>
<td>${escapeHtml(c.gatewaySlug)}</td>
<td>${escapeHtml(c.createdAt ?? '')}</td>
<td>${escapeHtml(c.lastUsedAt ?? 'never')}</td>
<td><form method="post" action="${escapeHtml(options.action)}">
<input type="hidden" name="csrf" value="${escapeHtml(options.csrf)}">
<input type="hidden" name="connection_id" value="${escapeHtml(c.id)}">
<button type="submit" class="deny">Disconnect</button>
</form></td>
</tr>`,
    )
    .join('\n');
  const table = options.connections.length
    ? `<table><thead><tr><th>Application</th><th>Gateway</th><th>Connected</th><th>Last used</th><th></th></tr></thead><tbody>
${rows}
</tbody></table>`
    : '<p>No applications are connected to your account.</p>';
  const body = `<h1>Connected apps</h1>
<p>Applications that may use MCP gateways as ${escapeHtml(options.email)}. Disconnecting one ends its access at once.</p>
${notice}
${table}`;
  return layout(title, body);
}
