import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  answer,
  eventually,
  gatewayFronting,
  initializeResult,
  memoryLogger,
  postMcp,
  rawMcpSession,
  startRawUpstream,
  startTestPlatform,
  unique,
  type FrontedGateway,
  type RawUpstream,
  type TestPlatform,
} from '@platform/test';

/** What the upstream does with a call of each of its tools: each fails in its own way, echoing what it was sent. */
const FAILURES = ['refuse', 'reset', 'malformed_json', 'malformed_sse', 'broken_resume'] as const;

/** The request's headers as text: what a careless upstream echoes (the credential, or the identity token, among them). */
const echoOf = (req: IncomingMessage) => JSON.stringify(req.headers);

/** A body the HTTP parser refuses (a chunk size that is not hex) followed by the echo: undici keeps it on the error. */
function garbleBody(req: IncomingMessage, res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  res.flushHeaders();
  res.socket!.write(`zz\r\n${echoOf(req)}\r\n`);
  setTimeout(() => res.socket?.destroy(), 50);
}

/**
 * Secrets never leave their one place (docs/gateway.md, Errors): an upstream that fails while echoing
 * what it was sent (its static credential, or the person's identity token) must not get either into the edge's or
 * the catalog's logs, the client's answer or the call record; nor may the client's own bearer token appear there.
 */
describe('MCP data plane: secrets stay out of failures', () => {
  const log = memoryLogger('platform');
  const credential = `Bearer ${unique('sk-static-credential')}`;
  /** Every Authorization value the upstream received: the static credential and the identity tokens. */
  const received = new Set<string>();
  /** Off while the catalog discovers the upstream: only the gateway's GET streams get a garbled body. */
  let garbleGets = false;
  let platform: TestPlatform;
  let upstream: RawUpstream;
  let gateway: FrontedGateway;

  beforeAll(async () => {
    upstream = await startRawUpstream((message, res, req) => {
      if (req.headers.authorization) received.add(req.headers.authorization);
      if (req.method === 'GET') {
        if (!garbleGets) return false;
        garbleBody(req, res);
        return true;
      }
      if (message?.method === 'initialize') answer(res, message.id, initializeResult());
      else if (message?.method === 'tools/list') answer(res, message.id, { tools: FAILURES.map((name) => ({ name, inputSchema: { type: 'object' } })) });
      else if (message?.method === 'tools/call') fail((message as { method: string; params: { name: string } }).params.name, req, res);
      else return false;
      return true;
    });
    platform = await startTestPlatform({ env: { ALLOWED_INTERNAL_NETWORKS: '127.0.0.0/8', MCP_PUBLISH_POLICY: 'self_publish' }, logger: log.logger });
    gateway = await gatewayFronting(platform, 'secrets', [
      { slug: 'static', url: upstream.url, authValue: credential, timeoutSeconds: 5 },
      { slug: 'ident', url: upstream.url, sendIdentity: true, timeoutSeconds: 5 },
    ]);
    garbleGets = true;
  }, 120_000);

  afterAll(async () => {
    await platform?.stop();
    await upstream?.close();
  });

  function fail(tool: string, req: IncomingMessage, res: ServerResponse): void {
    const echo = echoOf(req);
    switch (tool) {
      case 'refuse':
        res.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'invalid credential', received: echo }));
        return;
      case 'reset':
        res.socket!.destroy();
        return;
      case 'malformed_json':
        res.writeHead(200, { 'content-type': 'application/json' }).end(`{"jsonrpc":"2.0","result":${echo}`);
        return;
      case 'malformed_sse':
        res.writeHead(200, { 'content-type': 'text/event-stream' }).end(`data: not json ${echo}\n\n`);
        return;
      default:
        // A priming event and the end of the stream: the gateway resumes it with a GET (garbled, garbleBody).
        res.writeHead(200, { 'content-type': 'text/event-stream' }).end('id: e1\ndata: \n\n');
    }
  }

  /** The secrets of this test: the client's token, the static credential and every identity token sent upstream. */
  const secrets = () => [gateway.token, credential.slice('Bearer '.length), ...[...received].map((value) => value.slice('Bearer '.length))];
  const expectNoSecretIn = (text: string, where: string) => {
    for (const secret of secrets()) expect({ where, leaked: text.includes(secret) }).toEqual({ where, leaked: false });
  };
  /** The messages of the log lines (from the `from`th on) holding a secret (none), so a failure says which line leaked. */
  const leakingLogLines = (from = 0) =>
    log.lines
      .slice(from)
      .filter((line) => secrets().some((secret) => JSON.stringify(line).includes(secret)))
      .map((line) => line.msg);

  it('answers each failure in its own words and records its class, with no secret in the answer, the record or the logs', async () => {
    const session = await rawMcpSession(platform, gateway);
    const expected: Record<(typeof FAILURES)[number], { code: number; errorClass: string }> = {
      refuse: { code: -32010, errorClass: 'upstream_unauthorized' },
      reset: { code: -32010, errorClass: 'unreachable' },
      malformed_json: { code: -32011, errorClass: 'protocol_error' },
      malformed_sse: { code: -32011, errorClass: 'protocol_error' },
      broken_resume: { code: -32010, errorClass: 'unreachable' },
    };
    const bodies: string[] = [];
    const answers: { tool: string; error: unknown }[] = [];
    const wanted: unknown[] = [];
    let id = 0;
    for (const server of ['static', 'ident']) {
      for (const tool of FAILURES) {
        const response = await postMcp(platform, gateway, { jsonrpc: '2.0', id: ++id, method: 'tools/call', params: { name: `${server}__${tool}`, arguments: {} } }, session, '2025-06-18');
        const text = await response.text();
        bodies.push(text);
        const json = text.startsWith('{') ? text : text.split('\n').find((line) => line.startsWith('data: '))!.slice('data: '.length);
        answers.push({ tool: `${server}__${tool}`, error: (JSON.parse(json) as { error: unknown }).error });
        wanted.push({ tool: `${server}__${tool}`, error: { code: expected[tool].code, message: expect.stringContaining(`Upstream server '${server}'`), data: { errorClass: expected[tool].errorClass } } });
      }
    }
    // Both servers were reached with their credential: the static one, and an identity token of the person.
    expect(received.has(credential)).toBe(true);
    expect([...received].some((value) => value !== credential && value.startsWith('Bearer ey'))).toBe(true);

    const calls = async () => (await gateway.owner.get(`/v1/teams/${gateway.teamSlug}/calls?limit=100`)).body.data as { exposedName: string; errorClass: string }[];
    const records = await eventually(calls, (all) => answers.every(({ tool }) => all.some((call) => call.exposedName === tool)), 30_000);
    expectNoSecretIn(JSON.stringify(records), 'call records');
    for (const body of bodies) expectNoSecretIn(body, 'a response body');
    expect(leakingLogLines()).toEqual([]);
    expect(answers).toMatchObject(wanted);
    // Each record names the class its answer did.
    const recorded = Object.fromEntries(records.map((call) => [call.exposedName, call.errorClass]));
    expect(answers.map(({ tool }) => [tool, recorded[tool]])).toEqual(answers.map(({ tool }) => [tool, expected[tool.split('__')[1] as (typeof FAILURES)[number]].errorClass]));
  }, 90_000);

  it('logs a GET stream the upstream garbles without what the upstream sent', async () => {
    const from = log.lines.length;
    const session = await rawMcpSession(platform, gateway);
    const stream = new AbortController();
    const opened = await fetch(platform.url(`/mcp/${gateway.gatewaySlug}`), {
      headers: { authorization: `Bearer ${gateway.token}`, accept: 'text/event-stream', 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18' },
      signal: stream.signal,
    });
    expect(opened.status).toBe(200);
    try {
      // Both servers' relays failed at least once (each then retries with backoff).
      const failed = () => new Set(log.lines.slice(from).filter((line) => line.msg === 'an upstream GET stream failed; reconnecting').map((line) => line.serverId));
      await eventually(failed, (servers) => gateway.serverIds.every((serverId) => servers.has(serverId)), 30_000);
    } finally {
      stream.abort();
    }
    expect(leakingLogLines(from)).toEqual([]);
  }, 60_000);
});
