import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent, request } from 'undici';

/**
 * The floor for any HTTP gateway on this machine: a bare reverse proxy (node:http in, undici keep-alive out, no
 * framework, no authentication, no records) in a process of its own. The MCP benchmark runs it with BENCH_FLOOR=1
 * to tell what one more loopback hop costs here from what the platform's gateway adds on top.
 * Usage: `node --import tsx bare-proxy-process.ts <upstream url>`; prints `{"url": …}` once listening.
 */
const upstream = new URL(process.argv[2] ?? '');
const dispatcher = new Agent({ keepAliveTimeout: 60_000 });
const FORWARDED = ['accept', 'content-type', 'mcp-session-id', 'mcp-protocol-version', 'authorization'];
const RETURNED = ['content-type', 'mcp-session-id', 'cache-control'];

const server = createServer((req, res) => {
  void (async () => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const headers: Record<string, string> = {};
    for (const name of FORWARDED) if (typeof req.headers[name] === 'string') headers[name] = req.headers[name];
    const answer = await request(upstream, {
      method: req.method as 'GET' | 'POST' | 'DELETE',
      headers,
      body: chunks.length ? Buffer.concat(chunks) : null,
      dispatcher,
    });
    const returned: Record<string, string> = {};
    for (const name of RETURNED) if (typeof answer.headers[name] === 'string') returned[name] = answer.headers[name];
    const body = Buffer.from(await answer.body.arrayBuffer());
    res.writeHead(answer.statusCode, returned).end(body);
  })().catch(() => {
    if (!res.headersSent) res.writeHead(502).end();
  });
});

server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as AddressInfo;
  process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${port}${upstream.pathname}` })}\n`);
});
process.once('SIGTERM', () => process.exit(0));
