import { ApiClient, startTestPlatform, TEST_ADMIN, type TestPlatform } from '@platform/test';

/**
 * The HTML sign-in page: headers, CSRF double-submit and Origin, return_to validation, and the signed-in page that
 * continues to return_to with the cookie.
 */
describe('sign-in page', () => {
  let platform: TestPlatform;

  beforeAll(async () => {
    platform = await startTestPlatform();
  }, 120_000);
  afterAll(() => platform?.stop());

  /** Opens the page like a browser and returns what the form needs. */
  async function openPage(returnTo?: string) {
    const query = returnTo === undefined ? '' : `?return_to=${encodeURIComponent(returnTo)}`;
    const response = await fetch(platform.url(`/sign-in${query}`));
    const html = await response.text();
    const csrfCookie = response.headers.getSetCookie().find((c) => c.startsWith('platform_signin_csrf='))!;
    const cookie = csrfCookie.split(';')[0]!;
    const csrf = /name="csrf" value="([^"]+)"/.exec(html)![1]!;
    const action = /<form method="post" action="([^"]+)"/.exec(html)![1]!.replace(/&amp;/g, '&');
    return { response, html, cookie, csrf, action };
  }

  function submit(action: string, fields: Record<string, string>, headers: Record<string, string>) {
    return fetch(platform.url(action), {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
      body: new URLSearchParams(fields).toString(),
      redirect: 'manual',
    });
  }

  /**
   * Where the signed-in page sends the browser: its `<meta http-equiv="refresh">` and its link must agree. A 303 would
   * be held to the sign-in page's `form-action 'self'` by Chromium (test/e2e/pages-chromium.test.ts).
   */
  async function continuesTo(response: Response): Promise<string> {
    expect(response.status).toBe(200);
    expect(response.headers.get('location')).toBeNull();
    const html = await response.text();
    const unescape = (text: string) => text.replace(/&#39;/g, "'").replace(/&quot;/g, '"').replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
    const refresh = unescape(/<meta http-equiv="refresh" content="0; url=([^"]+)">/.exec(html)![1]!);
    expect(unescape(/<a href="([^"]+)">Continue<\/a>/.exec(html)![1]!)).toBe(refresh);
    return refresh;
  }

  it('renders an accessible page with a strict CSP, no framing and no caching', async () => {
    const { response, html } = await openPage('/teams');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/html/);
    expect(response.headers.get('content-security-policy')).toBe(
      "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'",
    );
    expect(response.headers.get('x-frame-options')).toBe('DENY');
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(html).toMatch(/<title>Sign in · [^<]+<\/title>/);
    expect(html).toContain('<label for="email">');
    expect(html).toContain('<label for="password">');
    expect(html).toContain('autocomplete="current-password"');
  });

  it('signs in and answers a page that continues to return_to, with the session cookie and a strict CSP', async () => {
    const returnTo = `/oauth/authorize?client_id=${encodeURIComponent('https://client.example/meta.json')}&state=${'s'.repeat(900)}"<>&pad=${'x'.repeat(6500)}`;
    const page = await openPage(returnTo);
    const response = await submit(page.action, { csrf: page.csrf, email: TEST_ADMIN.email, password: TEST_ADMIN.password }, {
      cookie: page.cookie,
      origin: platform.origin,
    });
    expect(await continuesTo(response)).toBe(returnTo);
    expect(response.headers.get('content-security-policy')).toBe(
      "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'",
    );
    expect(response.headers.get('cache-control')).toBe('no-store');
    const session = response.headers.getSetCookie().find((c) => c.startsWith('platform_session='))!;
    expect(session).toMatch(/HttpOnly/);
    const me = await fetch(platform.url('/v1/me'), { headers: { cookie: session.split(';')[0]! } });
    expect(me.status).toBe(200);
  });

  it('shows an error, without a session, for a wrong password', async () => {
    const page = await openPage('/x');
    const response = await submit(page.action, { csrf: page.csrf, email: TEST_ADMIN.email, password: 'wrong password here' }, { cookie: page.cookie });
    expect(response.status).toBe(401);
    expect(await response.text()).toContain('Invalid email or password.');
    expect(response.headers.getSetCookie().some((c) => c.startsWith('platform_session='))).toBe(false);
  });

  it('refuses a cross-origin POST and a POST without the double-submit token', async () => {
    const page = await openPage();
    const fields = { csrf: page.csrf, email: TEST_ADMIN.email, password: TEST_ADMIN.password };
    const crossOrigin = await submit(page.action, fields, { cookie: page.cookie, origin: 'https://evil.example' });
    expect(crossOrigin.status).toBe(403);
    expect(crossOrigin.headers.getSetCookie().some((c) => c.startsWith('platform_session='))).toBe(false);
    const noCookie = await submit(page.action, fields, { origin: platform.origin });
    expect(noCookie.status).toBe(403);
    const wrongToken = await submit(page.action, { ...fields, csrf: 'A'.repeat(43) }, { cookie: page.cookie });
    expect(wrongToken.status).toBe(403);
  });

  it.each([
    ['//evil.example/x'],
    ['/\\evil.example'],
    ['https://evil.example/'],
    ['javascript:alert(1)'],
    ['/a\nb'],
    ['relative/path'],
  ])('falls back to / for return_to %j', async (returnTo) => {
    const page = await openPage(returnTo);
    expect(page.action).toBe('/sign-in?return_to=%2F');
    // Even when the bad value is put back in the action's query string.
    const response = await submit(`/sign-in?return_to=${encodeURIComponent(returnTo)}`, {
      csrf: page.csrf,
      email: TEST_ADMIN.email,
      password: TEST_ADMIN.password,
    }, { cookie: page.cookie, origin: platform.origin });
    expect(await continuesTo(response)).toBe('/');
  });

  it('keeps the JSON API session usable after a page sign-in (same cookie)', async () => {
    const client = new ApiClient(platform);
    expect((await client.signIn(TEST_ADMIN.email, TEST_ADMIN.password)).status).toBe(200);
  });
});
