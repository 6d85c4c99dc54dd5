import { adminClient, memoryLogger, newPerson, newTeam, startRawUpstream, startTestPlatform, unique, type RawUpstream, type TestPerson, type TestPlatform } from '@platform/test';

/** Text of an upstream's answer past the part a log line keeps: it must never reach the logs. */
const TAIL = 'upstream-answer-tail-that-must-not-be-logged';

/**
 * A failed discovery logs what the error is (class, HTTP status, code) and the start of its message, never the
 * message whole: the SDK builds it from the upstream's answer, up to the byte bound (docs/catalog.md, Health checks
 * and scheduled discovery).
 */
describe('what a failed discovery logs', () => {
  const log = memoryLogger('platform');
  let platform: TestPlatform;
  let owner: TestPerson;
  let team: string;
  let upstream: RawUpstream;

  beforeAll(async () => {
    platform = await startTestPlatform({ env: { ALLOWED_INTERNAL_NETWORKS: '127.0.0.0/8' }, logger: log.logger });
    const admin = await adminClient(platform);
    owner = await newPerson(platform, admin, 'owner');
    team = await newTeam(admin, owner);
    upstream = await startRawUpstream((_message, res) => {
      res.writeHead(500, { 'content-type': 'text/plain' }).end(`${'x'.repeat(300)}${TAIL}${'y'.repeat(100_000)}`);
      return true;
    });
  }, 120_000);
  afterAll(async () => {
    await platform?.stop();
    await upstream?.close();
  });

  it('logs the class, the status and the first 200 characters of the cause', async () => {
    const created = await owner.client.post(`/v1/teams/${team}/mcp-servers`, { name: 'Failing', slug: unique('fail'), url: upstream.url, timeoutSeconds: 5 });
    expect(created.status).toBe(201);
    const refused = await owner.client.post(`/v1/teams/${team}/mcp-servers/${created.body.data.id}/refresh`);
    expect([refused.status, refused.body.error?.message]).toEqual([503, 'The MCP server could not be reached: http_error']);
    const line = log.lines.find((entry) => entry.msg === 'MCP server discovery failed' && entry.serverId === created.body.data.id);
    expect(line).toMatchObject({ errorClass: 'http_error', cause: { name: expect.any(String), status: 500, message: expect.any(String) } });
    expect(((line!.cause as { message: string }).message).length).toBeLessThanOrEqual(200);
    expect(log.text()).not.toContain(TAIL);
  });
});
