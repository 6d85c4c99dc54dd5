import { createServer } from 'node:net';
import type { ServerResponse } from 'node:http';

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
