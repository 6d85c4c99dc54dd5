import { createHash, randomBytes } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ApiClient, TEST_ADMIN, type TestPlatform } from '@platform/test';

/** A PKCE pair (RFC 7636 S256). */
export function pkce(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

/** GET or POST without following redirects, as a browser's first hop looks. */
export function fetchManual(url: string, init: RequestInit = {}): Promise<Response> {
  return fetch(url, { redirect: 'manual', ...init });
}

export function form(params: Record<string, string>): RequestInit {
  return { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(params).toString() };
}

/** An https server on 127.0.0.1 with a fresh self-signed certificate, serving client metadata documents. */
export interface MetadataHost {
  origin: string;
  certFile: string;
  /** Publishes a document at `path`; its client_id is the document's own URL. */
  publish(pathname: string, document: (clientId: string) => Record<string, unknown>): string;
  close(): Promise<void>;
}

export async function startMetadataHost(): Promise<MetadataHost> {
  const dir = mkdtempSync(path.join(tmpdir(), 'oauth-cert-'));
  const keyFile = path.join(dir, 'key.pem');
  const certFile = path.join(dir, 'cert.pem');
  execFileSync('openssl', [
    'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', keyFile, '-out', certFile, '-days', '1',
    '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1',
  ], { stdio: 'ignore' });
  const documents = new Map<string, string>();
  const server: Server = createServer({ key: readFileSync(keyFile), cert: readFileSync(certFile) }, (req, res) => {
    const body = documents.get(req.url ?? '');
    if (!body) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    certFile,
    publish(pathname, document) {
      const clientId = `${origin}${pathname}`;
      documents.set(pathname, JSON.stringify(document(clientId)));
      return clientId;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
        rmSync(dir, { recursive: true, force: true });
      }),
  };
}

/** A signed-in admin client. */
export async function adminClient(platform: TestPlatform): Promise<ApiClient> {
  const admin = new ApiClient(platform);
  const signedIn = await admin.signIn(TEST_ADMIN.email, TEST_ADMIN.password);
  if (signedIn.status !== 200) throw new Error(`admin sign-in failed: ${signedIn.status}`);
  return admin;
}

/** Creates a person with a password, signed in through a browser-like client. */
export async function personClient(platform: TestPlatform, admin: ApiClient, email: string): Promise<{ id: string; client: ApiClient }> {
  const password = 'a long enough password 123';
  const created = await admin.post('/v1/admin/people', { email, displayName: email.split('@')[0], password });
  if (created.status !== 201) throw new Error(`create person failed: ${created.status} ${JSON.stringify(created.body)}`);
  const client = new ApiClient(platform);
  const signedIn = await client.signIn(email, password);
  if (signedIn.status !== 200) throw new Error(`sign-in failed: ${signedIn.status}`);
  return { id: created.body.data.id, client };
}

/** A response's JSON body, loosely typed for assertions. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function json(response: Response): Promise<any> {
  return response.json();
}
