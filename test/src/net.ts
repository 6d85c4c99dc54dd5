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
