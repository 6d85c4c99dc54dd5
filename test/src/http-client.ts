import type { TestPlatform } from './platform';

export interface ApiResponse<T = any> { // eslint-disable-line @typescript-eslint/no-explicit-any
  status: number;
  headers: Headers;
  body: T;
}

/**
 * A tiny HTTP client for integration tests that behaves like the platform's own web pages: it keeps cookies,
 * sends the session's CSRF token and the installation's Origin on writes. `withApiKey` makes one that
 * authenticates with a Bearer key instead.
 */
export class ApiClient {
  private readonly cookies = new Map<string, string>();
  csrfToken: string | null = null;

  constructor(
    private readonly platform: Pick<TestPlatform, 'url' | 'origin'>,
    private readonly bearer: string | null = null,
  ) {}

  static withApiKey(platform: Pick<TestPlatform, 'url' | 'origin'>, key: string): ApiClient {
    return new ApiClient(platform, key);
  }

  /** Signs in with the JSON route and fetches the CSRF token from /v1/me. */
  async signIn(email: string, password: string): Promise<ApiResponse> {
    const response = await this.request('POST', '/v1/auth/sign-in', { email, password });
    if (response.status === 200) {
      const me = await this.request('GET', '/v1/me');
      this.csrfToken = me.body?.data?.csrfToken ?? null;
    }
    return response;
  }

  get(path: string, headers: Record<string, string> = {}): Promise<ApiResponse> {
    return this.request('GET', path, undefined, headers);
  }
  post(path: string, body?: unknown, headers: Record<string, string> = {}): Promise<ApiResponse> {
    return this.request('POST', path, body, headers);
  }
  put(path: string, body?: unknown, headers: Record<string, string> = {}): Promise<ApiResponse> {
    return this.request('PUT', path, body, headers);
  }
  patch(path: string, body?: unknown, headers: Record<string, string> = {}): Promise<ApiResponse> {
    return this.request('PATCH', path, body, headers);
  }
  delete(path: string, headers: Record<string, string> = {}): Promise<ApiResponse> {
    return this.request('DELETE', path, undefined, headers);
  }

  /** The raw cookie header this client sends (for tests that replay a session elsewhere). */
  cookieHeader(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  async request(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<ApiResponse> {
    const sent: Record<string, string> = { accept: 'application/json' };
    if (body !== undefined) sent['content-type'] = 'application/json';
    if (this.bearer) sent.authorization = `Bearer ${this.bearer}`;
    else {
      if (this.cookies.size > 0) sent.cookie = this.cookieHeader();
      if (method !== 'GET' && method !== 'HEAD') {
        sent.origin = this.platform.origin;
        if (this.csrfToken) sent['x-csrf-token'] = this.csrfToken;
      }
    }
    const response = await fetch(this.platform.url(path), {
      method,
      headers: { ...sent, ...headers },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      redirect: 'manual',
    });
    for (const cookie of response.headers.getSetCookie()) {
      const [pair] = cookie.split(';');
      const index = pair!.indexOf('=');
      const name = pair!.slice(0, index);
      const value = pair!.slice(index + 1);
      if (value === '' || /max-age=0/i.test(cookie)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      // not JSON (a page); keep the text
    }
    return { status: response.status, headers: response.headers, body: parsed };
  }
}
