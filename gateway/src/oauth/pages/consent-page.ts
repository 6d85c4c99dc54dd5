import type { OAuthClient } from '@platform/proto/gen/platform/identity/v1/oauth';
import { isLoopbackHost } from '@platform/runtime';
import { escapeHtml, layout } from './html';

export interface ConsentPageInput {
  instanceName: string;
  client: OAuthClient;
  redirectUri: string;
  gateway: { name: string; slug: string };
  personEmail: string;
  /** Where the form posts, and the hidden fields it carries (the authorize parameters and the CSRF token). */
  action: string;
  fields: ReadonlyMap<string, string>;
}

/**
 * The consent page: who asks (name, verified or not, where the browser will be sent) for what (the gateway),
 * with Allow and Deny. Everything shown comes from the client and is escaped.
 */
export function consentPage(input: ConsentPageInput): string {
  const client = input.client;
  const clientName = client.clientName || client.clientId;
  const redirect = new URL(input.redirectUri);
  const redirectHost = redirect.host;
  const verification = client.verified
    ? `<span class="badge verified">Verified</span> identity published at <strong>${escapeHtml(hostOf(client.clientId))}</strong>`
    : '<span class="badge unverified">Unverified</span> registered itself dynamically; its name is not checked';
  const warning = client.verified
    ? ''
    : '<p class="warning">Only continue if you started this connection yourself and trust the application.</p>';
  // MCP authorization (Localhost Redirect URI Risks): any program on the computer may listen on a loopback port and
  // name a verified client's metadata document as its client_id; the badge cannot tell them apart.
  const loopbackWarning = isLoopbackHost(redirect.hostname)
    ? `<p class="warning">The authorization goes to <strong>${escapeHtml(redirectHost)}</strong>, an address on your own computer where any program could be listening. Only continue if you started this connection from ${escapeHtml(clientName)} yourself just now.</p>`
    : '';
  const hidden = [...input.fields]
    .map(([name, value]) => `<input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(value)}">`)
    .join('\n');
  const title = `Connect ${escapeHtml(clientName)} to ${escapeHtml(input.gateway.name)}`;
  const body = `<h1>${title}?</h1>
<p><strong>${escapeHtml(clientName)}</strong> wants to use the MCP gateway <strong>${escapeHtml(input.gateway.name)}</strong> on ${escapeHtml(input.instanceName)} as you (${escapeHtml(input.personEmail)}).</p>
<dl>
<dt>Application</dt><dd>${escapeHtml(clientName)}</dd>
<dt>Identity</dt><dd>${verification}</dd>
<dt>Returns to</dt><dd>${escapeHtml(redirectHost)}</dd>
<dt>Gateway</dt><dd>${escapeHtml(input.gateway.name)} (${escapeHtml(input.gateway.slug)})</dd>
</dl>
${warning}
${loopbackWarning}
<form method="post" action="${escapeHtml(input.action)}">
${hidden}
<div class="actions">
<button type="submit" name="decision" value="deny" class="deny">Deny</button>
<button type="submit" name="decision" value="allow" class="allow">Allow</button>
</div>
</form>`;
  return layout(title, body);
}

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
}
