import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { memoryLogger, type LogLine } from '@platform/test';
import { createEdgeApp, type EdgeAppOptions } from '../src';

export { memoryLogger, type LogLine };

export interface RunningEdge {
  url(path: string): string;
  lines: LogLine[];
  close(): Promise<void>;
}

/** Starts the edge on an ephemeral port with real HTTP. */
export async function startEdge(options: Partial<EdgeAppOptions> & Pick<EdgeAppOptions, 'routes'>): Promise<RunningEdge> {
  const { logger, lines } = memoryLogger();
  const app = createEdgeApp({
    config: { appUrl: 'https://platform.example.test', bodyLimitBytes: 1024, instanceName: 'Test Platform' },
    logger,
    ...options,
  });
  const server = await new Promise<Server>((resolve, reject) => {
    const listening = app.listen(0, '127.0.0.1', (error?: Error) => (error ? reject(error) : resolve(listening)));
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: (path) => `http://127.0.0.1:${port}${path}`,
    lines,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** Waits until the access log line of a request is written (it is written when the response finishes). */
export async function accessLogFor(edge: RunningEdge, requestId: string): Promise<LogLine> {
  for (let i = 0; i < 100; i++) {
    const line = edge.lines.find((l) => l.msg === 'request' && l.requestId === requestId);
    if (line) return line;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`no access log line for ${requestId}`);
}

/** The parsed JSON body of a response, loosely typed for assertions. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function readJson(response: Response): Promise<any> {
  return response.json();
}
