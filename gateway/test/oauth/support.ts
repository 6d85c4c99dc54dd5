import { startHttpsServer } from '@platform/test';

/** GET or POST without following redirects, as a browser's first hop looks. */
export function fetchManual(url: string, init: RequestInit = {}): Promise<Response> {
  return fetch(url, { redirect: 'manual', ...init });
}

export function form(params: Record<string, string>): RequestInit {
  return { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(params).toString() };
}

/** An https server on 127.0.0.1 with a fresh self-signed certificate, serving client metadata documents. */
export interface MetadataHost {
  origin: string;
  certFile: string;
  /** Publishes a document at `path`; its client_id is the document's own URL. */
  publish(pathname: string, document: (clientId: string) => Record<string, unknown>): string;
  close(): Promise<void>;
}

export async function startMetadataHost(): Promise<MetadataHost> {
  const server = await startHttpsServer();
  return {
    origin: server.origin,
    certFile: server.caFile,
    publish: (pathname, document) => server.json(pathname, document(`${server.origin}${pathname}`)),
    close: () => server.stop(),
  };
}

/** A response's JSON body, loosely typed for assertions. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function json(response: Response): Promise<any> {
  return response.json();
}
