import { startHttpsServer, type HttpsAnswer, type HttpsTestServer } from '@platform/test';

export type Route = (url: string) => HttpsAnswer;

/**
 * An https server on 127.0.0.1 with a fresh self-signed certificate, serving client ID metadata documents at
 * `routes`; `caFile` is the certificate to trust (OUTBOUND_EXTRA_CA_FILE). Counts requests per path.
 */
export async function startMetadataServer(routes: Record<string, Route>): Promise<HttpsTestServer> {
  const server = await startHttpsServer();
  for (const [pathname, route] of Object.entries(routes)) server.route(pathname, route);
  return server;
}

/** A valid document for `url`. */
export function documentFor(url: string, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({
    client_id: url,
    client_name: 'Metadata Client',
    client_uri: 'https://client.example/',
    redirect_uris: ['http://127.0.0.1:43110/callback', 'https://client.example/callback'],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
    ...extra,
  });
}
