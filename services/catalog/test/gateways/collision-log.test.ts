import type { ServiceClients } from '@platform/runtime';
import { adminClient, grpcClients, memoryLogger, newPerson, newTeam, startTestPlatform, unique, type ApiClient, type TestPerson, type TestPlatform } from '@platform/test';
import { approveAll, publish, refreshServer, registerServer } from './catalog-setup';
import { startUpstream, type Upstream } from './upstream';

/** The characters of each colliding name the resolve's log line shows (src/domain/gateway-runtime.ts). */
const LOGGED_NAME_CHARS = 200;
const LINE = 'gateway leaves out capabilities whose names another server holds';

/**
 * ResolveGateway logs the names a run-time collision hides: names come from upstreams, of any length, so each is cut
 * and a resolve cannot write lines of megabytes.
 */
describe('the log line of a run-time name collision', () => {
  const log = memoryLogger('platform');
  let platform: TestPlatform;
  let clients: ServiceClients;
  let admin: ApiClient;
  let owner: TestPerson;
  let team: string;
  const upstreams: Upstream[] = [];
  const start = async (offer: Parameters<typeof startUpstream>[0]) => {
    const upstream = await startUpstream(offer);
    upstreams.push(upstream);
    return upstream;
  };

  beforeAll(async () => {
    platform = await startTestPlatform({ env: { ALLOWED_INTERNAL_NETWORKS: '127.0.0.0/8' }, logger: log.logger });
    clients = grpcClients(platform);
    admin = await adminClient(platform);
    owner = await newPerson(platform, admin, 'owner');
    team = await newTeam(admin, owner);
  }, 120_000);
  afterAll(async () => {
    await clients?.close();
    await platform?.stop();
    await Promise.all(upstreams.map((upstream) => upstream.close()));
  });

  it('cuts each hidden name it logs', async () => {
    // A resource's exposed name is its URI, as long as the upstream makes it.
    const longUri = `docs://shared/${'n'.repeat(1_000)}`;
    const first = await start({ resources: [longUri] });
    const later = await start({ tools: { other: 'Other' } });
    const a = await registerServer(owner, team, first);
    const b = await registerServer(owner, team, later);
    await publish(owner, admin, team, a.id);
    await publish(owner, admin, team, b.id);
    const slug = unique('gw');
    const created = await owner.client.post(`/v1/teams/${team}/gateways`, { slug, name: 'Names', servers: [{ serverId: a.id }, { serverId: b.id }] });
    expect(created.status).toBe(201);

    // The later server gains the same URI, approved after the first's: at run time it collides and is left out.
    later.offer.resources = [longUri];
    await refreshServer(owner, team, b.id);
    await approveAll(owner, admin, team, b.id);
    const runtime = await clients.catalog.resolveGateway({ slug });
    expect(runtime.servers.find((server) => server.id === b.id)!.capabilities.map((c) => c.exposedName)).toEqual([`${b.slug}__other`]);

    const line = log.lines.find((each) => each.msg === LINE && each.gateway === slug);
    expect(line).toMatchObject({ count: 1, hidden: [`resource URI '${longUri}'`.slice(0, LOGGED_NAME_CHARS)] });
  });
});
