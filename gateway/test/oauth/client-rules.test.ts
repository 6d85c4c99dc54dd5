import { startTestPlatform, type TestPlatform } from '@platform/test';
import { json } from './support';

/**
 * Dynamic client registration (RFC 7591) through the edge: metadata the identity service must refuse with an
 * RFC 7591 §3.2.2 error (400) rather than fail on. A platform of its own: registration allows 10 requests a
 * minute per address (§8), which the protocol tests elsewhere already use.
 */
let platform: TestPlatform;

beforeAll(async () => {
  platform = await startTestPlatform();
}, 60_000);

afterAll(async () => {
  await platform?.stop();
});

function register(metadata: Record<string, unknown>): Promise<Response> {
  // JSON.stringify escapes a NUL or an unpaired surrogate (\u0000, \ud800), as a client's JSON would.
  return fetch(platform.url('/oauth/register'), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(metadata) });
}

const redirect_uris = ['https://client.example/cb'];

it('a NUL or an unpaired surrogate in any member is invalid metadata (400), not a server error', async () => {
  const cases: Array<[Record<string, unknown>, string]> = [
    [{ client_name: 'a\u0000b', redirect_uris }, 'invalid_client_metadata'],
    [{ client_name: '\ud800', redirect_uris }, 'invalid_client_metadata'],
    [{ redirect_uris: ['https://client.example/c\u0000b'] }, 'invalid_redirect_uri'],
    [{ redirect_uris: ['http://127.0.0.1:9/\udfff'] }, 'invalid_redirect_uri'],
    [{ client_uri: 'https://client.example/\u0000', redirect_uris }, 'invalid_client_metadata'],
    [{ logo_uri: 'https://client.example/\ud800.png', redirect_uris }, 'invalid_client_metadata'],
  ];
  for (const [metadata, error] of cases) {
    const response = await register(metadata);
    expect(response.status).toBe(400);
    expect(await json(response)).toEqual({ error, error_description: expect.stringMatching(/NUL characters or unpaired surrogates/) });
  }
  // A character outside the BMP (a surrogate pair) is text like any other.
  expect((await register({ client_name: 'Tool \u{1F527}', redirect_uris })).status).toBe(201);
});
