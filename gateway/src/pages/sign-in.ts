import express, { type Express, type NextFunction, type Request, type Response } from 'express';
import { AppError, constantTimeEqual, randomToken } from '@platform/runtime';
import { readCookies, setSessionCookie } from '../auth/cookies';
import { secureCookies, type EdgeDeps } from '../edge-deps';
import { pageHeaders } from '../oauth/pages/html';
import { requestIdOf } from '../request-id';
import { setRouteTemplate } from '../route-template';
import { sendSignedInPage } from './signed-in-page';

/**
 * The HTML sign-in page, `GET /sign-in?return_to=/path` and `POST /sign-in` (a form). It starts the same
 * session as `POST /v1/auth/sign-in`, then answers a page that continues to `return_to` (`signed-in-page.ts`:
 * a redirect there would be held to this page's `form-action 'self'`). The OAuth authorize route sends people
 * here with `return_to=/oauth/authorize?...`, so long return paths (about 8,000 characters) must survive: the
 * form carries `return_to` in its action's query string, which keeps the form body small.
 *
 * CSRF: a double-submit token (a random value in a short-lived cookie and in a hidden field, compared in
 * constant time) plus, when the browser sends one, an Origin equal to APP_URL's origin.
 */
const PATH = '/sign-in';
const CSRF_FIELD = 'csrf';
const CSRF_TTL_SECONDS = 30 * 60;
const MAX_RETURN_TO = 8_192;
const CSRF_TOKEN = /^[A-Za-z0-9_-]{43}$/;

// The OAuth pages' headers: `form-action 'self'` only, and `Referrer-Policy: same-origin` (a form page; under
// no-referrer browsers send `Origin: null` on the POST, which the same-origin check below would refuse).
const PAGE_HEADERS = pageHeaders([], { hasForm: true });

export function mountSignInPage(app: Express, deps: EdgeDeps): void {
  const secure = secureCookies(deps.settings);
  const csrfCookie = secure ? '__Host-platform_signin_csrf' : 'platform_signin_csrf';
  const appOrigin = new URL(deps.settings.appUrl).origin;
  const parseForm = express.urlencoded({ limit: '8kb', extended: false });

  /** Reuses the browser's form token when it has one, so two open sign-in tabs both work. */
  function csrfTokenFor(req: Request, res: Response): string {
    const existing = readCookies(req).get(csrfCookie);
    const token = existing && CSRF_TOKEN.test(existing) ? existing : randomToken(32);
    res.append('Set-Cookie', cookie(csrfCookie, token, CSRF_TTL_SECONDS, secure));
    return token;
  }

  function render(req: Request, res: Response, status: number, returnTo: string, error?: string): void {
    setRouteTemplate(res, PATH);
    res.status(status).set(PAGE_HEADERS).send(page({ instanceName: deps.settings.instanceName, returnTo, csrf: csrfTokenFor(req, res), error }));
  }

  app.get(PATH, (req, res) => render(req, res, 200, safeReturnTo(req.query.return_to)));

  app.post(PATH, (req: Request, res: Response, next: NextFunction) => {
    const returnTo = safeReturnTo(req.query.return_to);
    parseForm(req, res, (parseError?: unknown) => {
      if (parseError) {
        render(req, res, 400, returnTo, 'The form could not be read. Please try again.');
        return;
      }
      submit(req, res, returnTo).catch(next);
    });
  });

  async function submit(req: Request, res: Response, returnTo: string): Promise<void> {
    const form = (req.body ?? {}) as Record<string, unknown>;
    const origin = req.headers.origin;
    const sentToken = typeof form[CSRF_FIELD] === 'string' ? form[CSRF_FIELD] : '';
    const cookieToken = readCookies(req).get(csrfCookie) ?? '';
    if ((origin !== undefined && origin !== appOrigin) || !cookieToken || !constantTimeEqual(sentToken, cookieToken)) {
      render(req, res, 403, returnTo, 'This sign-in form has expired or did not come from this site. Please try again.');
      return;
    }
    const email = typeof form.email === 'string' ? form.email.slice(0, 254) : '';
    const password = typeof form.password === 'string' ? form.password.slice(0, 1024) : '';
    try {
      const signedIn = await deps.clients.identity.signIn({
        email,
        password,
        clientIp: req.ip ?? '',
        userAgent: String(req.headers['user-agent'] ?? '').slice(0, 512),
        requestId: requestIdOf(res),
      });
      setSessionCookie(res, signedIn.sessionToken, { secure, maxAgeSeconds: deps.settings.sessionTtlSeconds });
      res.append('Set-Cookie', cookie(csrfCookie, '', 0, secure));
      setRouteTemplate(res, PATH);
      sendSignedInPage(res, { instanceName: deps.settings.instanceName, path: returnTo });
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      if (error.code === 'unauthenticated') render(req, res, 401, returnTo, 'Invalid email or password.');
      else if (error.code === 'slow_down') {
        res.set(error.headers ?? {});
        render(req, res, 429, returnTo, 'Too many failed sign-in attempts. Please wait a while and try again.');
      } else throw error;
    }
  }
}

/**
 * `return_to` must be a path on this site: it starts with one `/` (not `//` or `/\`, which browsers read as
 * another host), is printable ASCII without spaces or backslashes, and names no scheme. Anything else is `/`.
 */
export function safeReturnTo(value: unknown): string {
  if (typeof value !== 'string' || value.length === 0 || value.length > MAX_RETURN_TO) return '/';
  if (!value.startsWith('/') || value.startsWith('//') || value.startsWith('/\\')) return '/';
  if (!/^[\x21-\x7e]+$/.test(value) || value.includes('\\')) return '/';
  const base = 'http://return-to.invalid';
  try {
    if (new URL(value, base).origin !== base) return '/';
  } catch {
    return '/';
  }
  return value;
}

function cookie(name: string, value: string, maxAgeSeconds: number, secure: boolean): string {
  return [`${name}=${value}`, 'Path=/', `Max-Age=${maxAgeSeconds}`, 'HttpOnly', 'SameSite=Lax', ...(secure ? ['Secure'] : [])].join('; ');
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

function page(options: { instanceName: string; returnTo: string; csrf: string; error: string | undefined }): string {
  const name = escapeHtml(options.instanceName);
  const action = escapeHtml(`${PATH}?return_to=${encodeURIComponent(options.returnTo)}`);
  const error = options.error
    ? `<p class="error" role="alert" id="sign-in-error">${escapeHtml(options.error)}</p>`
    : '';
  const describedBy = options.error ? ' aria-describedby="sign-in-error"' : '';
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="same-origin">
<title>Sign in · ${name}</title>
<style>
body{font-family:system-ui,sans-serif;background:#f5f6f8;color:#1d2330;margin:0}
main{max-width:22rem;margin:10vh auto;background:#fff;padding:2rem;border-radius:.5rem;box-shadow:0 1px 4px rgba(0,0,0,.12)}
h1{font-size:1.4rem;margin:0 0 1.2rem}
label{display:block;font-weight:600;margin:.8rem 0 .3rem}
input{width:100%;box-sizing:border-box;padding:.55rem;font-size:1rem;border:1px solid #8a93a5;border-radius:.3rem}
input:focus{outline:3px solid #4a7dff;outline-offset:1px}
button{margin-top:1.3rem;width:100%;padding:.65rem;font-size:1rem;font-weight:600;color:#fff;background:#2452c9;border:0;border-radius:.3rem;cursor:pointer}
.error{background:#fdecec;color:#8a1313;border:1px solid #e3a5a5;padding:.6rem;border-radius:.3rem}
</style>
</head>
<body>
<main>
<h1>Sign in to ${name}</h1>
${error}
<form method="post" action="${action}"${describedBy}>
<input type="hidden" name="${CSRF_FIELD}" value="${escapeHtml(options.csrf)}">
<label for="email">Email</label>
<input id="email" name="email" type="email" autocomplete="username" required autofocus>
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required>
<button type="submit">Sign in</button>
</form>
</main>
</body>
</html>
`;
}
