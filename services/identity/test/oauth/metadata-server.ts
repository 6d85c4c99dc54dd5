import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';

export type Route = (url: string) => { status: number; headers?: Record<string, string>; body: string; delayMs?: number };

/**
 * An https server on 127.0.0.1 with a fresh self-signed certificate (openssl), serving client ID metadata
 * documents; `caFile` is the certificate to trust (OUTBOUND_EXTRA_CA_FILE). Counts requests per path.
 */
export async function startMetadataServer(routes: Record<string, Route>): Promise<{
  origin: string;
  caFile: string;
  hits: Map<string, number>;
  stop(): Promise<void>;
}> {
  const dir = mkdtempSync(path.join(tmpdir(), 'oauth-metadata-'));
  const keyFile = path.join(dir, 'key.pem');
  const caFile = path.join(dir, 'cert.pem');
  execFileSync('openssl', [
    'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1',
    '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1', '-keyout', keyFile, '-out', caFile,
  ], { stdio: 'ignore' });
  const hits = new Map<string, number>();
  const timers = new Set<NodeJS.Timeout>();
  let origin = '';
  const server: Server = createServer({ key: readFileSync(keyFile), cert: readFileSync(caFile) }, (req, res) => {
    const pathname = (req.url ?? '/').split('?')[0]!;
    hits.set(pathname, (hits.get(pathname) ?? 0) + 1);
    const route = routes[pathname];
    if (!route) {
      res.writeHead(404).end();
      return;
    }
    const answer = route(`${origin}${req.url}`);
    const send = () => res.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers }).end(answer.body);
    if (answer.delayMs) {
      const timer = setTimeout(() => {
        timers.delete(timer);
        if (!res.destroyed) send();
      }, answer.delayMs);
      timers.add(timer);
    } else send();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    caFile,
    hits,
    async stop() {
      for (const timer of timers) clearTimeout(timer);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      rmSync(dir, { recursive: true, force: true });
    },
  };
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
