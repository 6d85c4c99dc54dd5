import { McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import { startStatelessMcpServer } from '@platform/test';
import { z } from 'zod';

/** What the upstream lists; tests change it between refreshes. Tool descriptions are part of their fingerprint. */
export interface Offer {
  tools: Record<string, string>;
  /** Resource URIs. */
  resources: string[];
  prompts: string[];
  /** Resource templates; a read answers `{template} {uri}`. */
  templates: string[];
}

export interface Upstream {
  url: string;
  offer: Offer;
  /** The URIs its templates served, in order. */
  templateReads: string[];
  close(): Promise<void>;
}

function buildServer(offer: Offer, templateReads: string[]): McpServer {
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
  for (const template of offer.templates) {
    server.registerResource(template, new ResourceTemplate(template, { list: undefined }), { mimeType: 'text/plain' }, (at) => {
      templateReads.push(at.href);
      return { contents: [{ uri: at.href, text: `${template} ${at.href}` }] };
    });
  }
  return server;
}


/** An MCP server built with the SDK's McpServer, stateless (a new server per request), on 127.0.0.1. */
export async function startUpstream(offer: Partial<Offer> = {}): Promise<Upstream> {
  const state: Offer = { tools: {}, resources: [], prompts: [], templates: [], ...offer };
  const templateReads: string[] = [];
  const server = await startStatelessMcpServer(() => buildServer(state, templateReads));
  return { url: server.url, offer: state, templateReads, close: server.close };
}
