import { startPlatform, type RunningPlatform } from '@platform/platform/src/platform';
import { adminClient, ApiClient, describeWith, newPerson, newTeam, platformUrl, startTestPlatform, type TestPlatform } from '@platform/test';

const LIMIT = 20;
const SERVICES = ['IDENTITY', 'CATALOG', 'AGENTS', 'KNOWLEDGE', 'BILLING', 'NOTIFICATIONS'];

/** The counters are fixed one-minute windows: firing near a boundary would split the burst over two windows. */
async function awayFromWindowEdge(): Promise<void> {
  const intoMinute = Date.now() % 60_000;
  if (intoMinute > 50_000) await new Promise((resolve) => setTimeout(resolve, 60_000 - intoMinute + 200));
}

/** §5.1/§8: a key's rate limit is counted in the shared cache, so it is exact across edge replicas. */
describeWith('redis', 'API key rate limit across two edges sharing Redis', () => {
  let first: TestPlatform;
  let second: RunningPlatform;

  beforeAll(async () => {
    first = await startTestPlatform({ env: { API_KEY_RATE_LIMIT_PER_MINUTE: String(LIMIT) } });
    // A second edge process on the same database, Redis prefix and settings, reaching the first's services.
    const grpc = first.platform.grpcAddress!;
    const addresses = Object.fromEntries(SERVICES.map((name) => [`${name}_SERVICE_ADDR`, grpc]));
    second = await startPlatform({ target: 'gateway', env: { ...first.env, ...addresses } });
  }, 180_000);
  afterAll(async () => {
    await second?.stop();
    await first?.stop();
  });

  it('lets exactly the limit through when one key is split over both edges; the rest get 429 slow_down', async () => {
    const admin = await adminClient(first);
    const owner = await newPerson(first, admin, 'limited');
    const team = await newTeam(admin, owner);
    const created = await owner.client.post(`/v1/teams/${team}/api-keys`, { name: 'busy', kind: 'personal', scopes: ['query'] });
    expect(created.status).toBe(201);
    const viaFirst = ApiClient.withApiKey(first, created.body.data.key);
    const viaSecond = ApiClient.withApiKey({ url: (path) => platformUrl(second, path), origin: first.origin }, created.body.data.key);

    await awayFromWindowEdge();
    const responses = await Promise.all(Array.from({ length: 30 }, (_, i) => (i % 2 === 0 ? viaFirst : viaSecond).get('/v1/me')));

    const ok = responses.filter((r) => r.status === 200);
    const limited = responses.filter((r) => r.status === 429);
    expect(ok).toHaveLength(LIMIT);
    expect(limited).toHaveLength(30 - LIMIT);
    for (const response of limited) {
      expect(response.body.error.code).toBe('slow_down');
      expect(Number(response.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    }
    // Both edges served some of the allowed requests: the count really was shared.
    const servedBySecond = responses.filter((r, i) => i % 2 === 1 && r.status === 200).length;
    expect(servedBySecond).toBeGreaterThan(0);
    expect(servedBySecond).toBeLessThan(LIMIT);
  });
});
