import type { Response } from 'express';
import { escapeHtml, layout, sendPage } from './html';

/**
 * The connection-failure page of authorize problems found before the client and its redirect URI are
 * established (§4.1.1 rule 6): it never redirects, because the redirect target is not trusted yet.
 */
export function sendConnectionErrorPage(
  res: Response,
  options: { instanceName: string; problem: string; status?: number; headers?: Record<string, string> },
): void {
  const title = `Could not connect to ${escapeHtml(options.instanceName)}`;
  const body = `<h1>${title}</h1>
<p class="error" role="alert">${escapeHtml(options.problem)}</p>
<p>The application that sent you here made a request this server cannot accept. Return to the application and try again, or contact its developer.</p>`;
  if (options.headers) res.set(options.headers);
  sendPage(res, options.status ?? 400, layout(title, body));
}
