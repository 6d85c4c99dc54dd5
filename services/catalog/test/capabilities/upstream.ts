import { McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import { CallToolRequestSchema, ListToolsRequestSchema, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { startStatelessMcpServer } from '@platform/test';
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

/**
 * The tools as listed, made once per `state.tools` array. Tests list up to 10,000 tools and the server is built anew
 * for every request (stateless): registering each with a zod schema and converting them all at every `tools/list`
 * cost the test upstream seconds per discovery, which a loaded machine turned into the edge's deadline.
 */
const listings = new WeakMap<UpstreamState['tools'], Tool[]>();
function listingOf(tools: UpstreamState['tools']): Tool[] {
  let listing = listings.get(tools);
  if (!listing) {
    listing = tools.map(({ name, description }) => ({
      name,
      title: `${name} title`,
      description,
      inputSchema: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] },
    }));
    listings.set(tools, listing);
  }
  return listing;
}

function buildServer(state: UpstreamState): McpServer {
  const server = new McpServer({ name: 'test-upstream', version: '1.0.0' });
  // As McpServer does, the tools capability only when there are tools.
  if (state.tools.length > 0) {
    server.server.registerCapabilities({ tools: { listChanged: true } });
    server.server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: listingOf(state.tools) }));
    server.server.setRequestHandler(CallToolRequestSchema, (request) =>
      state.tools.some((tool) => tool.name === request.params.name)
        ? { content: [{ type: 'text', text: 'ok' }] }
        : { content: [{ type: 'text', text: `unknown tool ${request.params.name}` }], isError: true },
    );
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


/** An MCP server built with the SDK's McpServer, stateless (a new server and transport per request), on 127.0.0.1. */
export async function startUpstream(credentialHeader: string): Promise<Upstream> {
  const state: UpstreamState = { tools: [], seenCredentials: [] };
  const server = await startStatelessMcpServer(
    () => buildServer(state),
    (request) => state.seenCredentials.push(request.headers[credentialHeader.toLowerCase()] as string | undefined),
  );
  return { url: server.url, state, close: server.close };
}
