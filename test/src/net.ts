import diagnostics from 'node:diagnostics_channel';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer } from 'node:net';

/**
 * A loopback port that was free a moment ago, for a server that must start after its client knows the port. It is
 * not held: another process may bind it before the server does (which then fails to start). Where the server can
 * bind port 0 and say which port it got, do that instead (a platform process: `spawnPlatformListening`).
 */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      probe.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

/**
 * Until `res` can take more or is closed, leaving no listener behind: test servers that write as a well-behaved server
 * does wait for this after every refused write, thousands of times per response.
 */
export function drainedOrClosed(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}

/**
 * Watches the responses this process's HTTP servers give to the requests `which` selects for Node's "possible
 * EventEmitter memory leak" condition: more listeners for one event on a response than it allows (10 by default),
 * which Node reports with a MaxListenersExceededWarning on the process. Jest's sandbox has a process object of its own
 * that does not hear that warning, so the condition is watched instead, on each response as listeners are added.
 * Returns the overflows seen (`event: count`, once per event and response) and how to stop watching.
 */
export function watchListenerOverflow(which: (req: IncomingMessage) => boolean): { overflows: string[]; stop(): void } {
  const overflows: string[] = [];
  const onRequest = (message: unknown) => {
    const { request, response } = message as { request: IncomingMessage; response: ServerResponse };
    if (!which(request)) return;
    // Once per event and response, as Node warns.
    const overflowed = new Set<string | symbol>();
    response.on('newListener', (event: string | symbol) => {
      // Heard before the listener is added: with it, the count Node compares with the response's limit.
      const count = response.listenerCount(event) + 1;
      const limit = response.getMaxListeners();
      if (limit === 0 || count <= limit || overflowed.has(event)) return;
      overflowed.add(event);
      overflows.push(`${String(event)}: ${count}`);
    });
  };
  diagnostics.subscribe('http.server.request.start', onRequest);
  return { overflows, stop: () => diagnostics.unsubscribe('http.server.request.start', onRequest) };
}
