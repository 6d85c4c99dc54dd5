import type { Response } from 'express';

/** Escapes text for an HTML element or a double- or single-quoted attribute. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

/** An origin safe to name in a CSP source list (a parsed http(s) origin has no quotes, spaces or semicolons). */
const CSP_ORIGIN = /^https?:\/\/[A-Za-z0-9.\-[\]:]+$/;

/**
 * The headers of every OAuth page and of the sign-in page: no framing (clickjacking of Allow), no caching, no
 * scripts, and no referrer leaving the site (the query holds state and challenge). Chromium applies `form-action`
 * to every redirect that follows a form POST, so a page whose POST redirects to the client names the client's
 * redirect origin there; the sign-in POST, which cannot know where its return path's redirects end, answers with
 * a page that navigates there afresh (`../../pages/signed-in-page.ts`).
 *
 * Pages with a form use `same-origin` rather than `no-referrer`: under `no-referrer` browsers send
 * `Origin: null` on a form POST (Fetch §3.1), which would defeat the Origin check of the POST.
 */
export function pageHeaders(formActionOrigins: readonly string[] = [], options: { hasForm?: boolean } = {}): Record<string, string> {
  const extra = formActionOrigins.filter((origin) => CSP_ORIGIN.test(origin));
  const formAction = ["'self'", ...extra].join(' ');
  return {
    'Content-Type': 'text/html; charset=utf-8',
    'Content-Security-Policy': `default-src 'none'; style-src 'unsafe-inline'; form-action ${formAction}; frame-ancestors 'none'`,
    'X-Frame-Options': 'DENY',
    'Cache-Control': 'no-store',
    Pragma: 'no-cache',
    'Referrer-Policy': options.hasForm ? 'same-origin' : 'no-referrer',
    'X-Content-Type-Options': 'nosniff',
  };
}

export function sendPage(
  res: Response,
  status: number,
  html: string,
  options: { formActionOrigins?: readonly string[]; hasForm?: boolean } = {},
): void {
  res
    .status(status)
    .set(pageHeaders(options.formActionOrigins ?? [], { hasForm: options.hasForm ?? false }))
    .send(html);
}

/** The page frame; `title`, `body` and `head` (extra head elements) must already be escaped HTML. */
export function layout(title: string, body: string, head = ''): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">${head ? `\n${head}` : ''}
<title>${title}</title>
<style>
body{font-family:system-ui,sans-serif;background:#f5f6f8;color:#1d2330;margin:0}
main{max-width:30rem;margin:8vh auto;background:#fff;padding:2rem;border-radius:.5rem;box-shadow:0 1px 4px rgba(0,0,0,.12)}
h1{font-size:1.35rem;margin:0 0 1rem}
dl{display:grid;grid-template-columns:max-content 1fr;gap:.4rem 1rem;margin:1rem 0}
dt{font-weight:600}dd{margin:0;overflow-wrap:anywhere}
.badge{display:inline-block;font-size:.8rem;font-weight:700;padding:.1rem .45rem;border-radius:.25rem}
.verified{background:#e3f5e8;color:#14532d;border:1px solid #8fd1a4}
.unverified{background:#fff4e0;color:#7a4100;border:1px solid #f0b75e}
.warning{background:#fff4e0;border:1px solid #f0b75e;padding:.6rem;border-radius:.3rem}
.error{background:#fdecec;color:#8a1313;border:1px solid #e3a5a5;padding:.6rem;border-radius:.3rem}
.actions{display:flex;gap:.8rem;margin-top:1.4rem}
button{flex:1;padding:.65rem;font-size:1rem;font-weight:600;border-radius:.3rem;cursor:pointer;border:1px solid #2452c9}
button.allow{color:#fff;background:#2452c9}button.deny{color:#2452c9;background:#fff}
button:focus{outline:3px solid #4a7dff;outline-offset:1px}
table{width:100%;border-collapse:collapse}td,th{text-align:left;padding:.4rem;border-bottom:1px solid #e2e5ea;vertical-align:top}
</style>
</head>
<body>
<main>
${body}
</main>
</body>
</html>
`;
}
