import { McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
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


/** An MCP server built with the SDK's McpServer, stateless (a new server and transport per request), on 127.0.0.1. */
export async function startUpstream(credentialHeader: string): Promise<Upstream> {
  const state: UpstreamState = { tools: [], seenCredentials: [] };
  const server = await startStatelessMcpServer(
    () => buildServer(state),
    (request) => state.seenCredentials.push(request.headers[credentialHeader.toLowerCase()] as string | undefined),
  );
  return { url: server.url, state, close: server.close };
}
