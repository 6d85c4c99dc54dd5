import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from '../logging';
import { gracefulClose } from './graceful-close';
import { createOpsApp } from './ops-app';
import type { ReadinessReport } from './readiness';

export interface OpsServerOptions {
  port: number;
  host?: string;
  readiness: () => Promise<ReadinessReport>;
  logger: Logger;
}

export interface OpsServer {
  /** The port actually bound (useful with port 0). */
  port: number;
  /** Stops accepting; a probe or scrape in flight gets `graceMs` to finish. */
  close(graceMs?: number): Promise<void>;
}

/**
 * The process's ops listener (OPS_PORT): `/healthz`, `/readyz` and `/metrics` on a port of their own, for probes
 * and Prometheus, never exposed through the Ingress (docs/architecture.md, Health, readiness and ops).
 */
export async function startOpsServer(options: OpsServerOptions): Promise<OpsServer> {
  const app = createOpsApp({ readiness: options.readiness, logger: options.logger });
  const server = createServer({ keepAliveTimeout: 65_000 }, app);
  const close = gracefulClose(server);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  options.logger.info({ port }, 'ops listener listening');
  return { port, close: (graceMs = 2_000) => close(graceMs) };
}
