import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Page } from 'playwright-core';
import {
  chromiumAvailable,
  freePort,
  gatewayUser,
  launchChromium,
  pkcePair,
  startCallbackServer,
  startTestPlatform,
  type CallbackServer,
  type ChromiumSession,
  type GatewayUser,
  type TestPlatform,
} from '@platform/test';

/**
 * The sign-in and consent pages driven in headless Chromium (Debian's package, through playwright-core) as a
 * person would: an MCP client sends the browser to /oauth/authorize, the person signs in, reads the consent
 * page, clicks Allow (or Deny), and the browser lands on the client's loopback redirect URI. Also when the
 * authorization right after signing in needs no consent page (remembered consent, or an error): Chromium holds every
 * redirect after a form POST to the form page's `form-action`, which on the sign-in page names only this site.
 * Set KEEP_SCREENSHOTS=1 to keep the consent page screenshot (its path is printed).
 */
const available = chromiumAvailable();
if (!available) console.warn('pages-chromium: skipped, /usr/bin/chromium is missing (bash deploy/provision.sh installs it)');
const describeWithBrowser = available ? describe : describe.skip;
// A real browser on a 2-core machine beside the whole platform (embedded storage on a laptop) can be slow.
jest.setTimeout(90_000);

describeWithBrowser('sign-in and consent pages in Chromium', () => {
  let platform: TestPlatform;
  let user: GatewayUser;
  let appUrl: string;
  let callback: CallbackServer;
  let browser: ChromiumSession;
  let screenshots: string;

  beforeAll(async () => {
    screenshots = mkdtempSync(path.join(tmpdir(), 'e2e-screenshots-'));
    callback = await startCallbackServer();
    const port = await freePort();
    appUrl = `http://127.0.0.1:${port}`;
    platform = await startTestPlatform({ env: { PORT: String(port), APP_URL: appUrl } });
    user = await gatewayUser(platform, { email: 'browser@example.test', teamSlug: 'browser-team', gatewaySlug: 'browser-gw', gatewayName: 'Browser Gateway' });
    browser = await launchChromium();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await platform?.stop();
    await callback?.stop();
    if (screenshots && !process.env.KEEP_SCREENSHOTS) rmSync(screenshots, { recursive: true, force: true });
  });

  async function registerClient(name: string): Promise<string> {
    const response = await fetch(`${appUrl}/oauth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ client_name: name, redirect_uris: [callback.redirectUri], token_endpoint_auth_method: 'none' }),
    });
    expect(response.status).toBe(201);
    return ((await response.json()) as { client_id: string }).client_id;
  }

  function authorizeUrl(clientId: string, state: string, gatewaySlug = user.gatewaySlug): string {
    return `${appUrl}/oauth/authorize?${new URLSearchParams({
      response_type: 'code',
      client_id: clientId,
      redirect_uri: callback.redirectUri,
      code_challenge: pkcePair().challenge,
      code_challenge_method: 'S256',
      state,
      resource: `${appUrl}/mcp/${gatewaySlug}`,
    })}`;
  }

  test('not signed in → sign-in page → consent page → Allow → the client gets code, state and iss', async () => {
    const clientId = await registerClient('Browser Test App');
    const page = await browser.context.newPage();
    await page.goto(authorizeUrl(clientId, 'allow-state-1'));

    // The sign-in page, which will send the browser back to the authorization request.
    const consentResponse = page.waitForResponse((response) => new URL(response.url()).pathname === '/oauth/authorize' && response.request().method() === 'GET');
    await signIn(page);
    const consent = await consentResponse;

    expect(consent.status()).toBe(200);
    expect(consent.headers()['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(new URL(page.url()).pathname).toBe('/oauth/authorize');
    const text = await page.locator('body').innerText();
    expect(text).toContain('Browser Test App');
    expect(text).toContain('Unverified');
    expect(text).toContain(new URL(callback.redirectUri).host);
    expect(text).toContain('Browser Gateway');
    expect(text).toContain(user.person.email);
    const shot = path.join(screenshots, 'consent.png');
    await page.screenshot({ path: shot, fullPage: true });
    if (process.env.KEEP_SCREENSHOTS) console.log(`consent page screenshot: ${shot}`);

    await page.getByRole('button', { name: 'Allow' }).click();
    const landed = await callback.next();
    await page.waitForURL((url) => url.href.startsWith(callback.redirectUri));
    expect(landed.searchParams.get('code')).toMatch(/\S{32,}/);
    expect(landed.searchParams.get('state')).toBe('allow-state-1');
    expect(landed.searchParams.get('iss')).toBe(appUrl);
    expect(landed.searchParams.get('error')).toBeNull();
    await page.close();
  });

  test('Deny (a second client, same signed-in browser) → the client gets error=access_denied with state and iss', async () => {
    const clientId = await registerClient('Denied App');
    const page = await browser.context.newPage();
    await page.goto(authorizeUrl(clientId, 'deny-state-2'));
    // Already signed in: straight to the consent page.
    expect(new URL(page.url()).pathname).toBe('/oauth/authorize');
    expect(await page.locator('body').innerText()).toContain('Denied App');
    await page.getByRole('button', { name: 'Deny' }).click();
    const landed = await callback.next();
    // Closing a page while its navigation to the callback is still in flight can hang Chromium's close.
    await page.waitForURL((url) => url.href.startsWith(callback.redirectUri));
    expect(landed.searchParams.get('error')).toBe('access_denied');
    expect(landed.searchParams.get('state')).toBe('deny-state-2');
    expect(landed.searchParams.get('iss')).toBe(appUrl);
    expect(landed.searchParams.get('code')).toBeNull();
    await page.close();
  });

  test('consent remembered, session ended: after signing in again the browser goes straight to the client', async () => {
    // The sign-in POST's redirect chain would end at the client (remembered consent issues the code at once), and
    // Chromium applies the sign-in page's `form-action 'self'` to every redirect after a form submission.
    const clientId = await registerClient('Returning App');
    const page = await browser.context.newPage();
    await browser.context.clearCookies({ name: 'platform_session' });
    await page.goto(authorizeUrl(clientId, 'first-state-3'));
    await signIn(page);
    expect(new URL(page.url()).pathname).toBe('/oauth/authorize');
    await page.getByRole('button', { name: 'Allow' }).click();
    expect((await callback.next()).searchParams.get('state')).toBe('first-state-3');
    await page.waitForURL((url) => url.href.startsWith(callback.redirectUri));

    await browser.context.clearCookies({ name: 'platform_session' });
    await page.goto(authorizeUrl(clientId, 'again-state-4'));
    expect(new URL(page.url()).pathname).toBe('/sign-in');
    await signIn(page);
    const landed = await callback.next(30_000);
    await page.waitForURL((url) => url.href.startsWith(callback.redirectUri), { timeout: 30_000 });
    expect(landed.searchParams.get('code')).toMatch(/\S{32,}/);
    expect(landed.searchParams.get('state')).toBe('again-state-4');
    expect(landed.searchParams.get('iss')).toBe(appUrl);
    expect(landed.searchParams.get('error')).toBeNull();
    await page.close();
  });

  test('session ended, a gateway the person may not use: after signing in the client gets error=invalid_target', async () => {
    const clientId = await registerClient('Wrong Gateway App');
    const page = await browser.context.newPage();
    await browser.context.clearCookies({ name: 'platform_session' });
    await page.goto(authorizeUrl(clientId, 'target-state-5', 'no-such-gateway'));
    await signIn(page);
    const landed = await callback.next(30_000);
    await page.waitForURL((url) => url.href.startsWith(callback.redirectUri), { timeout: 30_000 });
    expect(landed.searchParams.get('error')).toBe('invalid_target');
    expect(landed.searchParams.get('state')).toBe('target-state-5');
    expect(landed.searchParams.get('iss')).toBe(appUrl);
    await page.close();
  });

  /** Fills in and submits the sign-in page the browser is on, and waits for what the browser lands on. */
  async function signIn(page: Page): Promise<void> {
    expect(new URL(page.url()).pathname).toBe('/sign-in');
    await page.fill('#email', user.person.email);
    await page.fill('#password', user.person.password);
    await page.click('button[type=submit]');
    await page.waitForURL((url) => url.pathname !== '/sign-in', { timeout: 30_000 });
    await page.waitForLoadState('load');
  }
});
