import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A plain http server on 127.0.0.1 standing in for an OAuth client's redirect URI (loopback redirect URIs are
 * allowed over http on any port). It records the full URL of each request to its path and answers with a small page.
 */
export interface CallbackServer {
  /** `http://127.0.0.1:<port>/callback` */
  redirectUri: string;
  /** Full URLs of the requests received, oldest first. */
  received: URL[];
  /** Resolves with the next request's URL (or the one already received since the last call). */
  next(timeoutMs?: number): Promise<URL>;
  stop(): Promise<void>;
}

export async function startCallbackServer(pathname = '/callback'): Promise<CallbackServer> {
  const received: URL[] = [];
  let consumed = 0;
  const waiters: Array<() => void> = [];
  let origin = '';
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', origin);
    // Browsers also ask for /favicon.ico and the like: only the redirect path counts.
    if (url.pathname !== pathname) {
      res.writeHead(404).end();
      return;
    }
    received.push(url);
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end('<!doctype html><title>Callback</title><p>You may close this window.</p>');
    for (const wake of waiters.splice(0)) wake();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    redirectUri: `${origin}${pathname}`,
    received,
    async next(timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      while (received.length <= consumed) {
        const left = deadline - Date.now();
        if (left <= 0) throw new Error('the callback server received no request');
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, left);
          waiters.push(() => {
            clearTimeout(timer);
            resolve();
          });
        });
      }
      return received[consumed++]!;
    },
    async stop() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
