import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';

/** What the test upstream lists; tests change it between refreshes. */
export interface UpstreamState {
  tools: { name: string; description: string }[];
  /** The credential header values received, in order. */
  seenCredentials: (string | undefined)[];
}

export interface Upstream {
  url: string;
  state: UpstreamState;
  close(): Promise<void>;
}

function buildServer(state: UpstreamState): McpServer {
  const server = new McpServer({ name: 'test-upstream', version: '1.0.0' });
  for (const tool of state.tools) {
    server.registerTool(tool.name, { title: `${tool.name} title`, description: tool.description, inputSchema: { query: z.string() } }, () => ({
      content: [{ type: 'text', text: 'ok' }],
    }));
  }
  server.registerResource('readme', 'file:///readme.md', { title: 'Readme', mimeType: 'text/markdown' }, (uri) => ({
    contents: [{ uri: uri.href, text: '# hello' }],
  }));
  server.registerResource('issue', new ResourceTemplate('issues://{id}', { list: undefined }), { description: 'One issue' }, (uri) => ({
    contents: [{ uri: uri.href, text: 'issue' }],
  }));
  server.registerPrompt('summarise', { description: 'Summarise a text', argsSchema: { text: z.string() } }, ({ text }) => ({
    messages: [{ role: 'user', content: { type: 'text', text } }],
  }));
  return server;
}

async function bodyOf(request: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : undefined;
}

/** An MCP server built with the SDK's McpServer, stateless (a new server and transport per request), on 127.0.0.1. */
export async function startUpstream(credentialHeader: string): Promise<Upstream> {
  const state: UpstreamState = { tools: [], seenCredentials: [] };
  const http: Server = createServer((request, response) => {
    void (async () => {
      state.seenCredentials.push(request.headers[credentialHeader.toLowerCase()] as string | undefined);
      if (request.method !== 'POST') {
        response.writeHead(405).end();
        return;
      }
      const server = buildServer(state);
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      response.on('close', () => {
        void transport.close();
        void server.close();
      });
      await server.connect(transport);
      await transport.handleRequest(request, response, await bodyOf(request));
    })().catch(() => {
      if (!response.headersSent) response.writeHead(500).end();
    });
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    state,
    close: () => new Promise((resolve) => http.close(() => resolve())),
  };
}
