import { createHash, randomBytes } from 'node:crypto';
import { ApiClient, type ApiResponse } from './http-client';
import { TEST_ADMIN, type TestPlatform } from './platform';

/**
 * What a person's browser does in an OAuth authorization, done with fetch: it carries the person's session
 * cookie to `/oauth/authorize`, submits the consent page's form the way the page does (its action and hidden
 * fields, CSRF token included, with the site's Origin), and stops at the redirect to the client.
 */

/** The HTML consent form: where it posts and its hidden fields. */
export interface ConsentForm {
  action: string;
  fields: Map<string, string>;
}

/** Reads the first POST form of a page (attribute values unescaped as a browser would). */
export function consentFormOf(html: string): ConsentForm | null {
  const form = /<form\b[^>]*\bmethod="post"[^>]*>([\s\S]*?)<\/form>/i.exec(html);
  if (!form) return null;
  const action = /\baction="([^"]*)"/i.exec(form[0])?.[1];
  if (action === undefined) return null;
  const fields = new Map<string, string>();
  for (const input of form[1]!.matchAll(/<input\b[^>]*>/gi)) {
    const tag = input[0];
    if (!/\btype="hidden"/i.test(tag)) continue;
    const name = /\bname="([^"]*)"/i.exec(tag)?.[1];
    const value = /\bvalue="([^"]*)"/i.exec(tag)?.[1] ?? '';
    if (name !== undefined) fields.set(unescapeHtml(name), unescapeHtml(value));
  }
  return { action: unescapeHtml(action), fields };
}

export function unescapeHtml(text: string): string {
  return text.replace(/&(amp|lt|gt|quot|#39|#x27);/g, (_, entity: string) =>
    ({ amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'", '#x27': "'" })[entity]!,
  );
}

export interface AuthorizeOutcome {
  /** The consent page's HTML when one was shown (absent when consent was remembered or the client trusted). */
  consentPage?: string;
  /** Where the server finally sent the browser (the client's redirect URI with its query). */
  redirect: URL;
}

/**
 * Follows an authorization URL as the signed-in person (session cookie), answers the consent page with
 * `decision`, and returns the redirect to the client. Throws on anything a browser would not get past.
 */
export async function authorizeAsPerson(
  platform: Pick<TestPlatform, 'origin'>,
  cookie: string,
  authorizationUrl: string | URL,
  decision: 'allow' | 'deny' = 'allow',
): Promise<AuthorizeOutcome> {
  const url = new URL(authorizationUrl);
  const first = await fetch(url, { headers: { cookie, accept: 'text/html' }, redirect: 'manual' });
  if (first.status === 302 || first.status === 303) {
    return { redirect: new URL(first.headers.get('location')!, url) };
  }
  const html = await first.text();
  if (first.status !== 200) throw new Error(`authorize answered ${first.status}: ${html.slice(0, 300)}`);
  const form = consentFormOf(html);
  if (!form) throw new Error('the authorize page has no consent form');
  const body = new URLSearchParams([...form.fields, ['decision', decision]]);
  const posted = await fetch(new URL(form.action, url), {
    method: 'POST',
    headers: { cookie, origin: platform.origin, 'content-type': 'application/x-www-form-urlencoded', accept: 'text/html' },
    body: body.toString(),
    redirect: 'manual',
  });
  const location = posted.headers.get('location');
  if (posted.status !== 303 && posted.status !== 302) {
    throw new Error(`the consent form answered ${posted.status}: ${(await posted.text()).slice(0, 300)}`);
  }
  return { consentPage: html, redirect: new URL(location!, url) };
}

/** A PKCE pair (RFC 7636, S256). */
export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

export interface GatewayUser {
  admin: ApiClient;
  /** The person, signed in through the JSON route (their client holds the session cookie). */
  person: { id: string; email: string; password: string; client: ApiClient };
  teamSlug: string;
  gatewaySlug: string;
  gatewayName: string;
}

/**
 * A person who may use a gateway: the platform admin creates the person, a team they own, and the team's
 * gateway; then the person signs in.
 */
export async function gatewayUser(platform: TestPlatform, options: { email: string; teamSlug: string; gatewaySlug: string; gatewayName?: string }): Promise<GatewayUser> {
  const expectStatus = (response: ApiResponse, status: number, what: string) => {
    if (response.status !== status) throw new Error(`${what}: ${response.status} ${JSON.stringify(response.body)}`);
    return response;
  };
  const admin = new ApiClient(platform);
  expectStatus(await admin.signIn(TEST_ADMIN.email, TEST_ADMIN.password), 200, 'admin sign-in');
  const password = `pw-${randomBytes(12).toString('base64url')}`;
  const created = expectStatus(
    await admin.post('/v1/admin/people', { email: options.email, displayName: options.email.split('@')[0], password }),
    201,
    'create person',
  );
  const personId = created.body.data.id as string;
  expectStatus(await admin.post('/v1/teams', { slug: options.teamSlug, name: `Team ${options.teamSlug}`, ownerId: personId }), 201, 'create team');
  const gatewayName = options.gatewayName ?? `Gateway ${options.gatewaySlug}`;
  expectStatus(await admin.post(`/v1/teams/${options.teamSlug}/gateways`, { slug: options.gatewaySlug, name: gatewayName }), 201, 'create gateway');
  const client = new ApiClient(platform);
  expectStatus(await client.signIn(options.email, password), 200, 'person sign-in');
  return {
    admin,
    person: { id: personId, email: options.email, password, client },
    teamSlug: options.teamSlug,
    gatewaySlug: options.gatewaySlug,
    gatewayName,
  };
}
