import type { ServiceClients } from '@platform/runtime';
import { grpcClients, startTestPlatform, type TestPlatform } from '@platform/test';
import { documentFor, startMetadataServer } from './metadata-server';

/** Without ALLOWED_INTERNAL_NETWORKS, the address guard refuses a metadata document on a loopback address. */
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
    expect(resolved.problem).toMatch(/not allowed/);
    expect(server.hits.get('/good.json')).toBeUndefined();
  });

  it('refuses a host name resolving to loopback too (checked at connect time)', async () => {
    const url = `${server.origin.replace('127.0.0.1', 'localhost')}/good.json`;
    const resolved = await clients.identity.resolveClient({ clientId: url });
    expect(resolved.client).toBeUndefined();
    expect(resolved.problem).toMatch(/not allowed/);
    expect(server.hits.get('/good.json')).toBeUndefined();
  });
});
