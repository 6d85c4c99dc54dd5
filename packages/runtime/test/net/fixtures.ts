import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer as createHttpServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { createServer as createTcpServer, type AddressInfo, type Server as TcpServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface SelfSignedCertificate {
  key: string;
  cert: string;
}

/** Node cannot make certificates, so the test uses openssl; fails loudly when it is missing rather than skipping. */
export function generateSelfSignedCertificate(): SelfSignedCertificate {
  try {
    execFileSync('openssl', ['version'], { stdio: 'ignore' });
  } catch {
    throw new Error('openssl is required by the address-guard tests to make a self-signed certificate; install it (apt-get install openssl)');
  }
  const dir = mkdtempSync(join(tmpdir(), 'guard-cert-'));
  try {
    execFileSync(
      'openssl',
      [
        'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1',
        '-subj', '/CN=localhost', '-addext', 'subjectAltName=DNS:localhost,DNS:metadata.test,IP:127.0.0.1,IP:::1',
        '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem'),
      ],
      { stdio: 'ignore' },
    );
    return { key: readFileSync(join(dir, 'key.pem'), 'utf8'), cert: readFileSync(join(dir, 'cert.pem'), 'utf8') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export type Handler = (request: IncomingMessage, response: ServerResponse) => void;

/** A local server that counts TCP connections, so a test can prove the guard refused before connecting. */
export interface CountingServer {
  port: number;
  connections(): number;
  close(): Promise<void>;
}

function track(server: HttpServer | TcpServer, host: string): Promise<CountingServer> {
  let count = 0;
  const sockets = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    count += 1;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  return new Promise((resolve) => {
    server.listen(0, host, () => {
      resolve({
        port: (server.address() as AddressInfo).port,
        connections: () => count,
        close: () =>
          new Promise<void>((done) => {
            for (const socket of sockets) socket.destroy();
            server.close(() => done());
          }),
      });
    });
  });
}

export function startHttpsServer(certificate: SelfSignedCertificate, handler: Handler, host = '127.0.0.1'): Promise<CountingServer> {
  return track(createHttpsServer({ key: certificate.key, cert: certificate.cert }, handler), host);
}

export function startHttpServer(handler: Handler, host = '127.0.0.1'): Promise<CountingServer> {
  return track(createHttpServer(handler), host);
}

/** Accepts TCP on every local address (dual stack) and drops it: any connection that reaches it is a guard failure. */
export function startTcpSink(): Promise<CountingServer> {
  return track(createTcpServer((socket) => socket.destroy()), '::');
}
