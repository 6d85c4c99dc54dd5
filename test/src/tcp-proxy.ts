import { connect, createServer, type Socket } from 'node:net';

/** A TCP relay in front of a server whose connections a test can freeze: bytes stop flowing, nothing is closed. */
export interface TcpProxy {
  port: number;
  /**
   * Stops relaying the server's bytes to every client connection that has sent `marker` (e.g. `SUBSCRIBE`): the
   * client sees a stalled connection, as behind a half-open TCP connection or a hung middlebox.
   */
  freeze(marker: string): number;
  /**
   * As `freeze(marker)`, and freezes every connection opened from now on as soon as it sends `marker`, until `thaw()`:
   * e.g. the subscriber connection (by the name it gives itself) never gets past its handshake while commands flow.
   */
  holdBack(marker: string): number;
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
  /** Set by `holdBack`: a connection that sends it is frozen from then on. */
  let heldMarker: string | undefined;
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
      if (heldMarker !== undefined && pair.sent.toUpperCase().includes(heldMarker)) pair.frozen = true;
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
  const freeze = (marker: string): number => {
    let frozen = 0;
    for (const pair of pairs) {
      if (!pair.sent.toUpperCase().includes(marker.toUpperCase())) continue;
      pair.frozen = true;
      frozen += 1;
    }
    return frozen;
  };
  return {
    port: address.port,
    freeze,
    holdBack(marker) {
      heldMarker = marker.toUpperCase();
      return freeze(marker);
    },
    accepted: () => accepted,
    thaw() {
      stalled = false;
      heldMarker = undefined;
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

/** A relay in front of the server a URL names (its port, else `defaultPort`), with the URL that reaches it through the relay. */
async function startRelayFor(serverUrl: string, defaultPort: number): Promise<TcpProxy & { url: string }> {
  const target = new URL(serverUrl);
  const relay = await startTcpProxy({ host: target.hostname, port: Number(target.port || defaultPort) });
  const relayed = new URL(serverUrl);
  relayed.hostname = '127.0.0.1';
  relayed.port = String(relay.port);
  return Object.assign(relay, { url: relayed.toString() });
}

/** A relay in front of the Redis server at `redisUrl`, with the URL that reaches Redis through it. */
export function startRedisRelay(redisUrl: string): Promise<TcpProxy & { url: string }> {
  return startRelayFor(redisUrl, 6379);
}

/** A relay in front of the PostgreSQL server at `databaseUrl`, with the URL that reaches it through the relay. */
export function startPostgresRelay(databaseUrl: string): Promise<TcpProxy & { url: string }> {
  return startRelayFor(databaseUrl, 5432);
}
