import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { startStatelessMcpServer } from '@platform/test';
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


/** An MCP server built with the SDK's McpServer, stateless (a new server per request), on 127.0.0.1. */
export async function startUpstream(offer: Partial<Offer> = {}): Promise<Upstream> {
  const state: Offer = { tools: {}, resources: [], prompts: [], ...offer };
  const server = await startStatelessMcpServer(() => buildServer(state));
  return { url: server.url, offer: state, close: server.close };
}
