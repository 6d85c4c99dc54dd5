import type { Response } from 'express';
import { escapeHtml, layout, sendPage } from '../oauth/pages/html';

/**
 * Answers a successful sign-in POST with a page that goes on to `path` (the return path, already checked to be on
 * this site) through a fresh navigation: `<meta http-equiv="refresh">`, and a link for browsers that ignore it.
 * Not a 303: Chromium applies the form page's CSP `form-action` to every redirect that follows the submission, and
 * the return path may redirect to another site (authorize with remembered consent or a trusted client answers
 * straight to the client's redirect URI). A navigation the new page starts is no form submission, so the sign-in
 * page keeps `form-action 'self'` and needs no script.
 */
export function sendSignedInPage(res: Response, options: { instanceName: string; path: string }): void {
  const title = `Signed in · ${escapeHtml(options.instanceName)}`;
  const target = escapeHtml(options.path);
  const head = `<meta http-equiv="refresh" content="0; url=${target}">`;
  const body = `<h1>Signed in</h1>
<p><a href="${target}">Continue</a></p>`;
  sendPage(res, 200, layout(title, body, head));
}
