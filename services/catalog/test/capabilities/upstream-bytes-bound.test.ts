import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { answer, drainedOrClosed, initializeResult, startRawUpstream } from '@platform/test';
import { MAX_DISCOVERY_BYTES, MAX_DISCOVERY_CONTAINERS, MAX_HANDSHAKE_BYTES } from '../../src/domain/upstream-fetch';
import { capabilityTestbed } from './testbed';

/**
 * An MCP upstream (raw HTTP, JSON answers) whose tools/list answer is one tool with a description of `descriptionBytes`,
 * written in 1 MiB pieces as the reader takes them. Reports how much of it was taken before the reader let go.
 */
async function startHugeListUpstream(descriptionBytes: number): Promise<{ url: string; written(): number; close(): Promise<void> }> {
  let written = 0;
  const piece = 'x'.repeat(1024 * 1024);
  const json = (res: ServerResponse, body: unknown, headers: Record<string, string> = {}) => res.writeHead(200, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', async () => {
      if (req.method !== 'POST') return void res.writeHead(405).end();
      const message = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id?: number; method: string };
      if (message.method === 'initialize') {
        return json(res, { jsonrpc: '2.0', id: message.id, result: { protocolVersion: '2025-06-18', capabilities: { tools: {} }, serverInfo: { name: 'huge', version: '1' } } });
      }
      if (message.id === undefined) return void res.writeHead(202).end();
      if (message.method !== 'tools/list') return json(res, { jsonrpc: '2.0', id: message.id, result: {} });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write(`{"jsonrpc":"2.0","id":${message.id},"result":{"tools":[{"name":"huge","inputSchema":{"type":"object"},"description":"`);
      for (let sent = 0; sent < descriptionBytes && !res.destroyed; sent += piece.length) {
        written += piece.length;
        if (!res.write(piece)) await drainedOrClosed(res);
      }
      res.end('"}]}}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    written: () => written,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

/**
 * An MCP upstream whose tools/list answer is 1,000 tools, each with an extension field of `emptyObjects` `{}`: few
 * bytes (3 each), as many JSON objects. Every tool stays within the per-capability bound on values.
 */
async function startWideListUpstream(emptyObjects: number) {
  const tools = Array.from({ length: 1000 }, (_, i) => `{"name":"wide-${i}","inputSchema":{"type":"object"},"x-filler":[${Array(emptyObjects).fill('{}').join(',')}]}`);
  const body = `{"tools":[${tools.join(',')}]}`;
  return startRawUpstream((message, res) => {
    if (message?.method === 'initialize') {
      answer(res, message.id, initializeResult());
      return true;
    }
    if (message?.method !== 'tools/list') return false;
    res.writeHead(200, { 'content-type': 'application/json' }).end(`{"jsonrpc":"2.0","id":${JSON.stringify(message.id)},"result":${body}}`);
    return true;
  });
}

/** What one upstream can make the catalog read: MAX_DISCOVERY_BYTES per discovery, every answer together. */
describe('the bound on what the catalog reads from an upstream', () => {
  const testbed = capabilityTestbed();
  const upstreams: { close(): Promise<void> }[] = [];
  afterAll(() => Promise.allSettled(upstreams.map((upstream) => upstream.close())));

  const register = (url: string) => testbed().register('huge', url, 60);

  it('refuses an answer that outgrows the bound, stops reading it, and stores nothing', async () => {
    const { owner, team } = testbed();
    const upstream = await startHugeListUpstream(MAX_DISCOVERY_BYTES + 8 * 1024 * 1024);
    upstreams.push(upstream);
    const id = await register(upstream.url);
    const refused = await owner.client.post(`/v1/teams/${team}/mcp-servers/${id}/refresh`);
    const message = "The MCP server's answer was refused (protocol_error): it sent more than 16 MiB, the most the platform reads from one server at a time";
    expect([refused.status, refused.body.error?.code, refused.body.error?.message]).toEqual([503, 'unavailable', message]);
    // The reader let go at the bound (plus what sockets hold), not at the end of the answer.
    expect(upstream.written()).toBeLessThan(MAX_DISCOVERY_BYTES + 8 * 1024 * 1024);
    const server = (await owner.client.get(`/v1/teams/${team}/mcp-servers/${id}`)).body.data;
    expect(server).toMatchObject({ lastRefreshError: message, refreshedAt: null, counts: { tools: 0 } });
  }, 120_000);

  it('takes a large answer within the bound', async () => {
    const { owner, team } = testbed();
    const upstream = await startHugeListUpstream(8 * 1024 * 1024);
    upstreams.push(upstream);
    const id = await register(upstream.url);
    const refreshed = await owner.client.post(`/v1/teams/${team}/mcp-servers/${id}/refresh`);
    expect(refreshed.status).toBe(200);
    expect(refreshed.body.data.map((capability: { name: string }) => capability.name)).toEqual(['huge']);
  }, 120_000);

  it('refuses answers of more JSON objects and arrays than the bound, however few their bytes, and stores nothing', async () => {
    const { owner, team } = testbed();
    // 1,000 tools of 1,100 objects each: 1.1 million, in about 3.3 MB (each tool well under the bound on values).
    const upstream = await startWideListUpstream(Math.ceil((MAX_DISCOVERY_CONTAINERS * 1.1) / 1000));
    upstreams.push(upstream);
    const id = await register(upstream.url);
    const refused = await owner.client.post(`/v1/teams/${team}/mcp-servers/${id}/refresh`);
    const message =
      "The MCP server's answer was refused (protocol_error): it sent more than 1,000,000 JSON objects and arrays, the most the platform reads from one server at a time";
    expect([refused.status, refused.body.error?.code, refused.body.error?.message]).toEqual([503, 'unavailable', message]);
    expect((await owner.client.get(`/v1/teams/${team}/mcp-servers/${id}`)).body.data).toMatchObject({ lastRefreshError: message, refreshedAt: null, counts: { tools: 0 } });
  }, 120_000);

  it('takes answers of many objects within the bound', async () => {
    const { owner, team } = testbed();
    const upstream = await startWideListUpstream(Math.floor((MAX_DISCOVERY_CONTAINERS * 0.5) / 1000));
    upstreams.push(upstream);
    const id = await register(upstream.url);
    const refreshed = await owner.client.post(`/v1/teams/${team}/mcp-servers/${id}/refresh`);
    expect(refreshed.status).toBe(200);
    expect((await owner.client.get(`/v1/teams/${team}/mcp-servers/${id}`)).body.data).toMatchObject({ lastRefreshError: null, counts: { tools: 1000 } });
  }, 120_000);

  it('reads at most 1 MiB until connected: a larger initialize answer is refused', async () => {
    const { owner, team } = testbed();
    const instructions = 'x'.repeat(MAX_HANDSHAKE_BYTES);
    const upstream = await startRawUpstream((message, res) => {
      if (message?.method !== 'initialize') return false;
      answer(res, message.id, { ...initializeResult(), instructions });
      return true;
    });
    upstreams.push(upstream);
    const id = await register(upstream.url);
    const refused = await owner.client.post(`/v1/teams/${team}/mcp-servers/${id}/refresh`);
    const message = "The MCP server's answer was refused (protocol_error): it sent more than 1 MiB, the most the platform reads from one server at a time";
    expect([refused.status, refused.body.error?.message]).toEqual([503, message]);
    expect((await owner.client.get(`/v1/teams/${team}/mcp-servers/${id}`)).body.data).toMatchObject({ lastRefreshError: message });
  }, 60_000);
});
