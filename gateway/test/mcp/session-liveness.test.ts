import { connectionName, createLogger, createRedisCache, type Cache } from '@platform/runtime';
import { describeWith, startRedisRelay, uniquePrefix, type TcpProxy } from '@platform/test';
import { SessionLiveness } from '../../src/mcp/session-liveness';

const logger = createLogger({ level: 'silent' });

/**
 * A replica remembers that a session is not ended only while it hears every end announced (its subscription is live):
 * otherwise an end announced meanwhile is lost to it and the session would stay usable there. Replica B reaches Redis
 * through a relay that lets its commands through but never its subscriber connection past the handshake, as for a
 * process started while Redis was away whose subscription is not confirmed yet.
 */
describeWith('redis', 'MCP session ends on a replica whose subscription is not live', (url) => {
  let relay: TcpProxy & { url: string };
  let caches: Cache[] = [];

  beforeAll(async () => {
    relay = await startRedisRelay(url());
  });
  afterAll(async () => {
    await Promise.all(caches.map((cache) => cache.close()));
    caches = [];
    await relay?.close();
  });

  it('asks the cache again for a session it saw live, instead of trusting announcements it cannot hear', async () => {
    const keyPrefix = uniquePrefix('liveness');
    relay.holdBack(connectionName(keyPrefix, 'subscriber'));
    // A short command timeout: how long B's subscription waits for a confirmation that cannot come.
    const cacheOfB = createRedisCache({ url: relay.url, keyPrefix, logger, commandTimeoutMs: 300 });
    const cacheOfA = createRedisCache({ url: url(), keyPrefix, logger });
    caches = [cacheOfB, cacheOfA];
    const replicaB = new SessionLiveness(cacheOfB, logger, 60_000);
    const replicaA = new SessionLiveness(cacheOfA, logger, 60_000);
    await replicaB.listen();
    await replicaA.listen();

    expect(await replicaB.isEnded('session-1')).toBe(false);
    // Ended on A: announced, but B's subscriber connection never hears it.
    await replicaA.end('session-1');
    expect(await replicaB.isEnded('session-1')).toBe(true);
  }, 30_000);
});
