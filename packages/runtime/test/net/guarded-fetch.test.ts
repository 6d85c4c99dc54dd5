import { getGlobalDispatcher, ProxyAgent, setGlobalDispatcher } from 'undici';
import {
  AddressNotAllowedError,
  FetchFailedError,
  FetchTimeoutError,
  guardedFetch,
  parseAllowedNetworks,
  ResponseTooLargeError,
  type GuardedFetchOptions,
} from '../../src/net';
import { generateSelfSignedCertificate, startHttpServer, startHttpsServer, type CountingServer, type Handler, type SelfSignedCertificate } from './fixtures';

const KIB = 1024;
const SECRET_BODY_MARKER = 'BODY-SECRET-MARKER';

let certificate: SelfSignedCertificate;
let server: CountingServer;
let plainServer: CountingServer;
let redirectTargetHits = 0;

const routes: Record<string, Handler> = {
  '/doc': (request, response) => {
    response.setHeader('content-type', 'application/json');
    response.setHeader('cache-control', 'max-age=600');
    response.end(JSON.stringify({ client_id: 'x', method: request.method, header: request.headers['x-test'] ?? null }));
  },
  '/echo': (request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => response.end(`${request.method}:${Buffer.concat(chunks).toString()}`));
  },
  '/redirect': (_request, response) => {
    response.statusCode = 302;
    response.setHeader('location', '/target');
    response.end();
  },
  '/target': (_request, response) => {
    redirectTargetHits += 1;
    response.end('target');
  },
  '/hang': () => {
    // never answers
  },
  '/stall-body': (_request, response) => {
    response.writeHead(200, { 'content-type': 'text/plain' });
    response.write('partial');
    // the rest never comes
  },
  '/exact': (_request, response) => {
    response.write(Buffer.alloc(16 * KIB, 'a'));
    response.end();
  },
  '/big-chunked': (_request, response) => {
    // No content-length: the cap must hold while streaming.
    response.write(SECRET_BODY_MARKER);
    response.write(Buffer.alloc(17 * KIB, 'b'));
    response.end();
  },
  '/big-declared': (_request, response) => {
    const body = Buffer.alloc(17 * KIB, 'c');
    response.setHeader('content-length', body.length);
    response.end(body);
  },
};

const handler: Handler = (request, response) => {
  const route = routes[new URL(request.url ?? '/', 'https://x').pathname];
  if (route) route(request, response);
  else {
    response.statusCode = 404;
    response.end();
  }
};

beforeAll(async () => {
  certificate = generateSelfSignedCertificate();
  server = await startHttpsServer(certificate, handler);
  plainServer = await startHttpServer(handler);
});
afterAll(async () => {
  await server.close();
  await plainServer.close();
});

const loopbackAllowed = parseAllowedNetworks('127.0.0.0/8');

function options(overrides: Partial<GuardedFetchOptions> = {}): GuardedFetchOptions {
  return { allowedNetworks: loopbackAllowed, timeoutMs: 5000, maxBytes: 16 * KIB, tls: { ca: certificate.cert }, ...overrides };
}

function url(path: string, host = '127.0.0.1'): string {
  return `https://${host}:${server.port}${path}`;
}

describe('guardedFetch against a local https server', () => {
  it('refuses loopback before connecting when it is not an allowed network', async () => {
    const before = server.connections();
    await expect(guardedFetch(url('/doc'), options({ allowedNetworks: [] }))).rejects.toBeInstanceOf(AddressNotAllowedError);
    await expect(guardedFetch(url('/doc', 'localhost'), options({ allowedNetworks: [] }))).rejects.toBeInstanceOf(AddressNotAllowedError);
    expect(server.connections()).toBe(before);
  });

  it('fetches through ALLOWED_INTERNAL_NETWORKS, trusting the test certificate', async () => {
    const before = server.connections();
    const response = await guardedFetch(url('/doc'), options({ headers: { 'x-test': 'yes' } }));
    expect(response.status).toBe(200);
    expect(response.headers['cache-control']).toBe('max-age=600');
    expect(JSON.parse(response.body.toString())).toEqual({ client_id: 'x', method: 'GET', header: 'yes' });
    expect(server.connections()).toBe(before + 1);
  });

  it('resolves host names with the system resolver and checks the result', async () => {
    const response = await guardedFetch(url('/doc', 'localhost'), options());
    expect(response.status).toBe(200);
  });

  it('sends the method and body', async () => {
    const response = await guardedFetch(url('/echo'), options({ method: 'POST', body: 'payload', headers: { 'content-type': 'text/plain' } }));
    expect(response.body.toString()).toBe('POST:payload');
  });

  it('does not follow redirects: the 3xx comes back and the target is never hit', async () => {
    const response = await guardedFetch(url('/redirect'), options());
    expect(response.status).toBe(302);
    expect(response.headers.location).toBe('/target');
    expect(redirectTargetHits).toBe(0);
  });

  it('times out when the server never answers', async () => {
    await expect(guardedFetch(url('/hang'), options({ timeoutMs: 300 }))).rejects.toBeInstanceOf(FetchTimeoutError);
  });

  it('times out when the body stalls after the headers: the deadline covers the body', async () => {
    await expect(guardedFetch(url('/stall-body'), options({ timeoutMs: 300 }))).rejects.toBeInstanceOf(FetchTimeoutError);
  });

  it('accepts a body of exactly maxBytes', async () => {
    const response = await guardedFetch(url('/exact'), options());
    expect(response.body.length).toBe(16 * KIB);
  });

  it('stops reading a streamed body past maxBytes, without the body in the error', async () => {
    const error = await guardedFetch(url('/big-chunked'), options()).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ResponseTooLargeError);
    expect((error as Error).message).not.toContain(SECRET_BODY_MARKER);
  });

  it('refuses a declared content-length past maxBytes', async () => {
    await expect(guardedFetch(url('/big-declared'), options())).rejects.toBeInstanceOf(ResponseTooLargeError);
  });

  it('fails with FetchFailedError when the certificate is not trusted', async () => {
    await expect(guardedFetch(url('/doc'), options({ tls: {} }))).rejects.toBeInstanceOf(FetchFailedError);
  });

  it('fails with FetchFailedError when nothing listens', async () => {
    const closed = await startHttpServer(handler);
    const port = closed.port;
    await closed.close();
    await expect(guardedFetch(`https://127.0.0.1:${port}/`, options())).rejects.toMatchObject({ code: 'fetch_failed' });
  });

  it('refuses URLs with credentials even to allowed networks, before connecting', async () => {
    const before = server.connections();
    await expect(guardedFetch(`https://user:pass@127.0.0.1:${server.port}/doc`, options())).rejects.toBeInstanceOf(AddressNotAllowedError);
    expect(server.connections()).toBe(before);
  });
});

describe('guardedFetch and plain http', () => {
  it('refuses http unless allowHttp is set', async () => {
    const target = `http://127.0.0.1:${plainServer.port}/doc`;
    await expect(guardedFetch(target, options())).rejects.toBeInstanceOf(AddressNotAllowedError);
    expect(plainServer.connections()).toBe(0);
    const response = await guardedFetch(target, options({ allowHttp: true }));
    expect(response.status).toBe(200);
  });
});

describe('guardedFetch ignores proxies', () => {
  const proxyVariables = ['HTTPS_PROXY', 'https_proxy', 'HTTP_PROXY', 'http_proxy', 'ALL_PROXY', 'all_proxy'];
  const saved: Record<string, string | undefined> = {};

  beforeAll(() => {
    for (const name of proxyVariables) {
      saved[name] = process.env[name];
      process.env[name] = 'http://127.0.0.1:9'; // nothing listens on the discard port
    }
    delete process.env.NO_PROXY;
  });
  afterAll(() => {
    for (const name of proxyVariables) {
      if (saved[name] === undefined) delete process.env[name];
      else process.env[name] = saved[name];
    }
  });

  it('connects directly even with proxy variables pointing at a dead address', async () => {
    const response = await guardedFetch(url('/doc'), options());
    expect(response.status).toBe(200);
  });

  it('does not use the global dispatcher, even when it is a proxy', async () => {
    const previous = getGlobalDispatcher();
    const deadProxy = new ProxyAgent('http://127.0.0.1:9');
    setGlobalDispatcher(deadProxy);
    try {
      const response = await guardedFetch(url('/doc'), options());
      expect(response.status).toBe(200);
    } finally {
      setGlobalDispatcher(previous);
      await deadProxy.close();
    }
  });
});
