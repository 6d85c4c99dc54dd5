import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One OTLP/HTTP JSON export as a receiver got it: the path (`/v1/traces`, ...) and the decoded body. */
export interface OtlpExport {
  path: string;
  body: OtlpTraces;
}

/** The parts of an OTLP/JSON trace export the tests read. */
export interface OtlpTraces {
  resourceSpans?: Array<{
    resource?: { attributes?: Array<{ key: string; value: { stringValue?: string } }> };
    scopeSpans?: Array<{ spans?: Array<{ name: string; traceId: string; spanId: string }> }>;
  }>;
}

/**
 * A real OTLP/HTTP receiver on loopback (what a collector's `otlphttp` receiver is, for the JSON encoding): it keeps
 * every export and answers 200, so the SDK's exporters run as they would against a collector.
 */
export async function startOtlpReceiver(): Promise<{ endpoint: string; exports: OtlpExport[]; close(): Promise<void> }> {
  const exports: OtlpExport[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      exports.push({ path: req.url ?? '', body: text ? (JSON.parse(text) as OtlpTraces) : {} });
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    exports,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The resource's `service.name` of every trace export received. */
export function exportedServiceNames(exports: OtlpExport[]): string[] {
  return exports
    .filter((entry) => entry.path === '/v1/traces')
    .flatMap((entry) => entry.body.resourceSpans ?? [])
    .map((spans) => spans.resource?.attributes?.find((attribute) => attribute.key === 'service.name')?.value.stringValue ?? '');
}

export type OtlpReceiver = Awaited<ReturnType<typeof startOtlpReceiver>>;

/**
 * A receiver for one test file, pointed at by OTLP/HTTP JSON, its exports cleared before each test; the SDK reads
 * process.env itself, so `keys` (what the file's cases set) are put back as they were after the file.
 */
export function otlpReceiverForFile(keys: readonly string[]): () => OtlpReceiver {
  let receiver: OtlpReceiver | undefined;
  const saved: Record<string, string | undefined> = {};
  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    for (const key of keys) saved[key] = process.env[key];
  });
  afterAll(async () => {
    for (const key of keys) {
      if (saved[key] === undefined) delete process.env[key];
      else process.env[key] = saved[key];
    }
    await receiver?.close();
  });
  beforeEach(() => receiver!.exports.splice(0));
  return () => receiver!;
}
