import { ConfigError, resolveStartOrder } from '@platform/runtime';
import { MODULES } from '../src/modules';
import { startPlatform } from '../src/platform';
import { parseTargets } from '../src/targets';

describe('targets and modules', () => {
  it('starts `all` in dependency order: ports, services, gRPC server, edge, listener', () => {
    const order = resolveStartOrder(MODULES, parseTargets('all').modules);
    const before = (a: string, b: string) => expect(order.indexOf(a)).toBeLessThan(order.indexOf(b));
    for (const service of ['identity', 'catalog', 'agents', 'knowledge', 'billing', 'notifications']) {
      before('database', service);
      before('bus', service);
      before(service, 'grpc-server');
      // Relays publish once every service's consumers are subscribed, and stop (in reverse) before any of them.
      before(service, 'relays');
    }
    before('grpc-server', 'gateway');
    before('gateway', 'http');
    expect(new Set(order).size).toBe(order.length);
  });

  it('runs only what one service needs for --target=identity', () => {
    const order = resolveStartOrder(MODULES, parseTargets('identity').modules);
    expect(order).toEqual(['telemetry', 'database', 'cache', 'bus', 'secrets', 'clients', 'identity', 'relays', 'grpc-server', 'maintenance', 'http']);
  });

  it('accepts a comma list and refuses unknown targets by name', () => {
    expect(parseTargets('identity, catalog').targets).toEqual(['identity', 'catalog']);
    expect(() => parseTargets('identity,nope')).toThrow(/unknown target "nope"; valid targets: all, gateway, identity/);
  });

  it('refuses to run a single service on embedded infrastructure, naming what is missing', async () => {
    const attempt = startPlatform({ target: 'catalog', env: { LOG_LEVEL: 'silent' } });
    await expect(attempt).rejects.toBeInstanceOf(ConfigError);
    await expect(startPlatform({ target: 'catalog', env: { LOG_LEVEL: 'silent' } })).rejects.toThrow(
      /missing: DATABASE_URL \(PostgreSQL\), REDIS_URL \(Redis\), KAFKA_BROKERS \(Kafka\)/,
    );
    await expect(
      startPlatform({ target: 'gateway', env: { LOG_LEVEL: 'silent', DATABASE_URL: 'postgres://x@127.0.0.1:1/x', REDIS_URL: 'redis://127.0.0.1:1' } }),
    ).rejects.toThrow(/missing: KAFKA_BROKERS \(Kafka\)/);
  });
});
