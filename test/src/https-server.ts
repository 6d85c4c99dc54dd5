import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';

/** One answer of a {@link HttpsTestServer} route. */
export interface HttpsAnswer {
  status?: number;
  headers?: Record<string, string>;
  body: string;
  /** Answer only after this long (for a client's timeout); the answer is dropped if the server stops first. */
  delayMs?: number;
}

/** A fresh self-signed certificate for 127.0.0.1 (made by `openssl`) in a temporary directory. */
export interface SelfSignedCertificate {
  keyFile: string;
  /** The certificate (PEM): it is its own CA. */
  certFile: string;
  /** Deletes the files. */
  remove(): void;
}

export function selfSignedCertificate(): SelfSignedCertificate {
  const dir = mkdtempSync(path.join(tmpdir(), 'https-test-'));
  const keyFile = path.join(dir, 'key.pem');
  const certFile = path.join(dir, 'cert.pem');
  execFileSync('openssl', [
    'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1',
    '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1', '-keyout', keyFile, '-out', certFile,
  ], { stdio: 'ignore' });
  return { keyFile, certFile, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * An https server on 127.0.0.1 with a fresh self-signed certificate (made by `openssl`), for what a real client
 * would host on the internet, such as client ID metadata documents. The platform trusts it through
 * `OUTBOUND_EXTRA_CA_FILE: server.caFile` and reaches it through `ALLOWED_INTERNAL_NETWORKS: '127.0.0.0/8'`.
 */
export interface HttpsTestServer {
  /** `https://127.0.0.1:<port>` */
  origin: string;
  /** The certificate (PEM) to trust: it is its own CA. */
  caFile: string;
  /** Requests seen per path. */
  hits: Map<string, number>;
  /** Serves `answer` (or a JSON value) at `pathname`; returns the absolute URL. */
  route(pathname: string, answer: HttpsAnswer | ((url: string) => HttpsAnswer)): string;
  /** Serves `document` as JSON at `pathname`; returns the absolute URL. */
  json(pathname: string, document: unknown): string;
  stop(): Promise<void>;
}

export async function startHttpsServer(): Promise<HttpsTestServer> {
  const certificate = selfSignedCertificate();
  const caFile = certificate.certFile;
  const routes = new Map<string, (url: string) => HttpsAnswer>();
  const hits = new Map<string, number>();
  const timers = new Set<NodeJS.Timeout>();
  let origin = '';
  const server = createServer({ key: readFileSync(certificate.keyFile), cert: readFileSync(caFile) }, (req, res) => {
    const pathname = (req.url ?? '/').split('?')[0]!;
    hits.set(pathname, (hits.get(pathname) ?? 0) + 1);
    const route = routes.get(pathname);
    if (!route) {
      res.writeHead(404).end();
      return;
    }
    const answer = route(`${origin}${req.url ?? '/'}`);
    const send = () => res.writeHead(answer.status ?? 200, { 'content-type': 'application/json', ...answer.headers }).end(answer.body);
    if (!answer.delayMs) {
      send();
      return;
    }
    const timer = setTimeout(() => {
      timers.delete(timer);
      if (!res.destroyed) send();
    }, answer.delayMs);
    timers.add(timer);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const route = (pathname: string, answer: HttpsAnswer | ((url: string) => HttpsAnswer)): string => {
    routes.set(pathname, typeof answer === 'function' ? answer : () => answer);
    return `${origin}${pathname}`;
  };
  return {
    origin,
    caFile,
    hits,
    route,
    json: (pathname, document) => route(pathname, { body: JSON.stringify(document) }),
    async stop() {
      for (const timer of timers) clearTimeout(timer);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      certificate.remove();
    },
  };
}
