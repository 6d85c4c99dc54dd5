import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';

/** What the upstream lists; tests change it between refreshes. Tool descriptions are part of their fingerprint. */
export interface Offer {
  tools: Record<string, string>;
  /** Resource URIs. */
  resources: string[];
  prompts: string[];
}

export interface Upstream {
  url: string;
  offer: Offer;
  close(): Promise<void>;
}

function buildServer(offer: Offer): McpServer {
  const server = new McpServer({ name: 'gateway-test-upstream', version: '1.0.0' });
  for (const [name, description] of Object.entries(offer.tools)) {
    server.registerTool(name, { description, inputSchema: { query: z.string() } }, () => ({ content: [{ type: 'text', text: name }] }));
  }
  for (const uri of offer.resources) {
    server.registerResource(uri, uri, { mimeType: 'text/plain' }, (at) => ({ contents: [{ uri: at.href, text: uri }] }));
  }
  for (const name of offer.prompts) {
    server.registerPrompt(name, { description: `${name} prompt` }, () => ({ messages: [{ role: 'user', content: { type: 'text', text: name } }] }));
  }
  return server;
}

async function bodyOf(request: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : undefined;
}

/** An MCP server built with the SDK's McpServer, stateless (a new server per request), on 127.0.0.1. */
export async function startUpstream(offer: Partial<Offer> = {}): Promise<Upstream> {
  const state: Offer = { tools: {}, resources: [], prompts: [], ...offer };
  const http: Server = createServer((request, response) => {
    void (async () => {
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
    offer: state,
    close: () => new Promise((resolve) => http.close(() => resolve())),
  };
}
