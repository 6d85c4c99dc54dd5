import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from '../logging';
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
  close(): Promise<void>;
}

/** Listens with `createOpsApp` on its own port (for example a metrics port beside a gRPC-only process). */
export async function startOpsServer(options: OpsServerOptions): Promise<OpsServer> {
  const app = createOpsApp({ readiness: options.readiness, logger: options.logger });
  const server = await new Promise<Server>((resolve, reject) => {
    const listening = app.listen(options.port, options.host ?? '0.0.0.0', (error?: Error) =>
      error ? reject(error) : resolve(listening),
    );
  });
  const port = (server.address() as AddressInfo).port;
  options.logger.info({ port }, 'ops server listening');

  return {
    port,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        // Probes keep connections alive; close idle ones so shutdown does not wait for their timeout.
        server.closeIdleConnections();
      }),
  };
}
