import type { Server, ServerResponse } from 'node:http';

/** Stops a server gracefully; see `gracefulClose`. */
export type GracefulClose = (graceMs: number) => Promise<void>;

/**
 * Prepares `server` (call before it serves) for a graceful close: the returned function stops accepting, lets the
 * requests in flight finish within `graceMs` (then cuts every connection), and closes each keep-alive connection
 * as soon as it is idle. Node's own `close()` leaves a keep-alive connection whose answer finishes after the close
 * began open until its keep-alive timeout (65 s on the edge), which held the whole stop for its full grace: answers
 * not yet begun now say `Connection: close`, and idle connections are closed again whenever an answer ends.
 */
export function gracefulClose(server: Server): GracefulClose {
  const inFlight = new Set<ServerResponse>();
  let closing = false;
  server.on('request', (_req, res: ServerResponse) => {
    if (closing) res.shouldKeepAlive = false;
    inFlight.add(res);
    res.once('close', () => {
      inFlight.delete(res);
      if (closing) setImmediate(() => server.closeIdleConnections());
    });
  });
  let closed: Promise<void> | undefined;
  return (graceMs) =>
    (closed ??= new Promise<void>((resolve) => {
      closing = true;
      for (const res of inFlight) if (!res.headersSent) res.shouldKeepAlive = false;
      const force = setTimeout(() => server.closeAllConnections(), graceMs);
      force.unref();
      server.close(() => {
        clearTimeout(force);
        resolve();
      });
      server.closeIdleConnections();
    }));
}
