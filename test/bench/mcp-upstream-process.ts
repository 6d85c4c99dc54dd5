import { startMcpUpstream } from '../src/mcp-upstream';

/**
 * The benchmark's upstream MCP server as a process of its own (as in production, the upstream does not share an
 * event loop with the gateway or the load generator). Usage: `node --import tsx mcp-upstream-process.ts <name>
 * [--json]`; prints `{"url": …}` on one line once listening, and closes on SIGTERM.
 */
async function main(): Promise<void> {
  const name = process.argv[2] ?? 'bench';
  const upstream = await startMcpUpstream({ name, jsonResponses: process.argv.includes('--json') });
  // The fixture keeps every request's headers for tests to inspect; over a benchmark that would grow without bound.
  setInterval(() => {
    upstream.requests.length = 0;
  }, 1000).unref();
  process.once('SIGTERM', () => {
    void upstream.close().finally(() => process.exit(0));
  });
  process.stdout.write(`${JSON.stringify({ url: upstream.url })}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
