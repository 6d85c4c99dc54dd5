import type { ServiceClients } from '@platform/runtime';
import { grpcClients, startTestPlatform, type TestPlatform } from '@platform/test';
import { documentFor, startMetadataServer } from './metadata-server';

const UNFETCHABLE = "The client's metadata document could not be fetched.";

/**
 * Without ALLOWED_INTERNAL_NETWORKS, the address guard refuses a metadata document on a loopback address, and says so
 * no differently from a host that does not resolve (the problem is shown to whoever sent the authorize request).
 */
describe('client ID metadata documents behind the address guard', () => {
  let server: Awaited<ReturnType<typeof startMetadataServer>>;
  let platform: TestPlatform;
  let clients: ServiceClients;

  beforeAll(async () => {
    server = await startMetadataServer({ '/good.json': (url) => ({ status: 200, body: documentFor(url) }) });
    platform = await startTestPlatform({ env: { OUTBOUND_EXTRA_CA_FILE: server.caFile } });
    clients = grpcClients(platform, { deadlineMs: 5000 });
  }, 120_000);

  afterAll(async () => {
    await clients?.close();
    await platform?.stop();
    await server?.stop();
  });

  it('refuses the loopback server without fetching it', async () => {
    const resolved = await clients.identity.resolveClient({ clientId: `${server.origin}/good.json` });
    expect(resolved.client).toBeUndefined();
    expect(resolved.problem).toBe(UNFETCHABLE);
    expect(server.hits.get('/good.json')).toBeUndefined();
  });

  it('refuses a host name resolving to loopback too (checked at connect time)', async () => {
    const url = `${server.origin.replace('127.0.0.1', 'localhost')}/good.json`;
    const resolved = await clients.identity.resolveClient({ clientId: url });
    expect(resolved.client).toBeUndefined();
    expect(resolved.problem).toBe(UNFETCHABLE);
    expect(server.hits.get('/good.json')).toBeUndefined();
  });

  it('answers a refused address as it answers a host that does not resolve: no oracle for which names are internal', async () => {
    const refused = await clients.identity.resolveClient({ clientId: `${server.origin}/refused-like-nothing.json` });
    const unresolvable = await clients.identity.resolveClient({ clientId: 'https://no-such-host.invalid/client.json' });
    expect(refused.client).toBeUndefined();
    expect(refused.problem).toBe(unresolvable.problem);
    expect(server.hits.get('/refused-like-nothing.json')).toBeUndefined();
  });
});
