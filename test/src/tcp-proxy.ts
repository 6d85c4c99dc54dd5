import { connect, createServer, type Socket } from 'node:net';

/** A TCP relay in front of a server whose connections a test can freeze: bytes stop flowing, nothing is closed. */
export interface TcpProxy {
  port: number;
  /**
   * Stops relaying the server's bytes to every client connection that has sent `marker` (e.g. `SUBSCRIBE`): the
   * client sees a stalled connection, as behind a half-open TCP connection or a hung middlebox.
   */
  freeze(marker: string): number;
  /** Relays again whatever was held back, then everything that follows (ends a `stall()` too). */
  thaw(): void;
  /**
   * Holds back the server's bytes on every connection, those opened from now on included, until `thaw()`: a server
   * that accepts connections and never answers (a stalled database, a hung middlebox).
   */
  stall(): void;
  /** Closes every connection and closes each new one at once, until `restore()`: the server is gone (an outage). */
  cut(): void;
  /** Relays new connections again after `cut()`. */
  restore(): void;
  /** How many connections clients have opened through it so far. */
  accepted(): number;
  close(): Promise<void>;
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const pairs = new Set<{ client: Socket; server: Socket; sent: string; frozen: boolean; held: Buffer[] }>();
  let accepted = 0;
  let stalled = false;
  let down = false;
  const proxy = createServer((client) => {
    accepted += 1;
    if (down) {
      client.destroy();
      return;
    }
    const server = connect(target.port, target.host);
    const pair = { client, server, sent: '', frozen: stalled, held: [] as Buffer[] };
    pairs.add(pair);
    client.on('data', (chunk: Buffer) => {
      if (pair.sent.length < 4096) pair.sent += chunk.toString('latin1');
      server.write(chunk);
    });
    server.on('data', (chunk: Buffer) => (pair.frozen ? pair.held.push(chunk) : client.write(chunk)));
    const end = () => {
      pairs.delete(pair);
      client.destroy();
      server.destroy();
    };
    client.on('close', end).on('error', end);
    server.on('close', end).on('error', end);
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  const address = proxy.address();
  if (typeof address !== 'object' || !address) throw new Error('the proxy has no port');
  return {
    port: address.port,
    freeze(marker) {
      let frozen = 0;
      for (const pair of pairs) {
        if (!pair.sent.toUpperCase().includes(marker.toUpperCase())) continue;
        pair.frozen = true;
        frozen += 1;
      }
      return frozen;
    },
    accepted: () => accepted,
    thaw() {
      stalled = false;
      for (const pair of pairs) {
        pair.frozen = false;
        for (const chunk of pair.held.splice(0)) pair.client.write(chunk);
      }
    },
    stall() {
      stalled = true;
      for (const pair of pairs) pair.frozen = true;
    },
    cut() {
      down = true;
      for (const pair of pairs) {
        pair.client.destroy();
        pair.server.destroy();
      }
    },
    restore() {
      down = false;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const pair of pairs) {
          pair.client.destroy();
          pair.server.destroy();
        }
        proxy.close(() => resolve());
      }),
  };
}

/** A relay in front of the Redis server at `redisUrl`, with the URL that reaches Redis through it. */
export async function startRedisRelay(redisUrl: string): Promise<TcpProxy & { url: string }> {
  const target = new URL(redisUrl);
  const relay = await startTcpProxy({ host: target.hostname, port: Number(target.port || 6379) });
  const relayed = new URL(redisUrl);
  relayed.hostname = '127.0.0.1';
  relayed.port = String(relay.port);
  return Object.assign(relay, { url: relayed.toString() });
}
