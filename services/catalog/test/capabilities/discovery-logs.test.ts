import type { IncomingMessage, ServerResponse } from 'node:http';
import { adminClient, memoryLogger, newPerson, newTeam, startRawUpstream, startTestPlatform, unique, type RawUpstream, type TestPerson, type TestPlatform } from '@platform/test';

/** Text of an upstream's answer: it must never reach the logs. */
const TAIL = 'upstream-answer-tail-that-must-not-be-logged';

/** How the echoing upstream fails `initialize`, each time saying what it was sent (the credential among it). */
type Failure = 'refuse' | 'malformed_json' | 'rpc_error' | 'reset';

function failEchoing(failure: Failure, id: number | undefined, req: IncomingMessage, res: ServerResponse): void {
  const echo = `you sent ${req.headers.authorization}`;
  if (failure === 'refuse') res.writeHead(401, { 'content-type': 'text/plain' }).end(echo);
  else if (failure === 'malformed_json') res.writeHead(200, { 'content-type': 'application/json' }).end(echo);
  else if (failure === 'rpc_error') res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id, error: { code: -32600, message: echo } }));
  else res.socket!.destroy();
}

/**
 * A failed discovery logs what the error is (class, HTTP status, code), never its message: the SDK and node build
 * messages from the upstream's answer (an HTTP error's body, a JSON-RPC error's message, the start of malformed JSON),
 * which may echo the credential it was sent (docs/catalog.md, Health checks and scheduled discovery).
 */
describe('what a failed discovery logs', () => {
  const log = memoryLogger('platform');
  const credential = unique('sk-static-credential');
  let platform: TestPlatform;
  let owner: TestPerson;
  let team: string;
  let upstream: RawUpstream;
  let echoing: RawUpstream;
  let failure: Failure = 'refuse';

  beforeAll(async () => {
    platform = await startTestPlatform({ env: { ALLOWED_INTERNAL_NETWORKS: '127.0.0.0/8' }, logger: log.logger });
    const admin = await adminClient(platform);
    owner = await newPerson(platform, admin, 'owner');
    team = await newTeam(admin, owner);
    upstream = await startRawUpstream((_message, res) => {
      res.writeHead(500, { 'content-type': 'text/plain' }).end(`${'x'.repeat(300)}${TAIL}${'y'.repeat(100_000)}`);
      return true;
    });
    echoing = await startRawUpstream((message, res, req) => {
      if (message?.method !== 'initialize') return false;
      failEchoing(failure, message.id, req, res);
      return true;
    });
  }, 120_000);
  afterAll(async () => {
    await platform?.stop();
    await upstream?.close();
    await echoing?.close();
  });

  const discoveryFailedLine = (serverId: string) => log.lines.filter((entry) => entry.msg === 'MCP server discovery failed' && entry.serverId === serverId).at(-1);

  it('logs the class and the status of the cause, none of the upstream\'s answer', async () => {
    const created = await owner.client.post(`/v1/teams/${team}/mcp-servers`, { name: 'Failing', slug: unique('fail'), url: upstream.url, timeoutSeconds: 5 });
    expect(created.status).toBe(201);
    const refused = await owner.client.post(`/v1/teams/${team}/mcp-servers/${created.body.data.id}/refresh`);
    expect([refused.status, refused.body.error?.message]).toEqual([503, 'The MCP server could not be reached: http_error']);
    const line = discoveryFailedLine(created.body.data.id);
    expect(line).toMatchObject({ errorClass: 'http_error', cause: { name: expect.any(String), status: 500 } });
    expect(line!.cause).not.toHaveProperty('message');
    expect(log.text()).not.toContain('xxxxxxxxxx');
    expect(log.text()).not.toContain(TAIL);
  });

  it('never logs the credential an upstream echoes while failing, however it fails', async () => {
    const created = await owner.client.post(`/v1/teams/${team}/mcp-servers`, { name: 'Echoing', slug: unique('echo'), url: echoing.url, timeoutSeconds: 5, authValue: `Bearer ${credential}` });
    expect(created.status).toBe(201);
    const serverId = created.body.data.id as string;
    const expected: Record<Failure, { errorClass: string; status?: number }> = {
      refuse: { errorClass: 'http_error', status: 401 },
      malformed_json: { errorClass: 'protocol_error' },
      rpc_error: { errorClass: 'protocol_error' },
      reset: { errorClass: 'unreachable' },
    };
    const logged: unknown[] = [];
    const answers: unknown[] = [];
    for (const each of Object.keys(expected) as Failure[]) {
      failure = each;
      const before = log.lines.length;
      const refused = await owner.client.post(`/v1/teams/${team}/mcp-servers/${serverId}/refresh`);
      answers.push([refused.status, JSON.stringify(refused.body).includes(credential)]);
      logged.push({ failure: each, ...log.lines.slice(before).find((entry) => entry.msg === 'MCP server discovery failed') });
    }
    expect(log.lines.filter((entry) => JSON.stringify(entry).includes(credential)).map((entry) => entry.msg)).toEqual([]);
    expect(answers).toEqual(Object.keys(expected).map(() => [503, false]));
    const server = await owner.client.get(`/v1/teams/${team}/mcp-servers/${serverId}`);
    expect(JSON.stringify(server.body)).not.toContain(credential);
    expect(logged).toMatchObject(
      Object.entries(expected).map(([each, { errorClass, status }]) => ({ failure: each, errorClass, cause: status ? { status } : {} })),
    );
  });
});
