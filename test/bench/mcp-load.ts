import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { Pool, type Dispatcher } from 'undici';

/**
 * A lean MCP Streamable HTTP load generator: raw JSON-RPC over undici keep-alive connections, so that it costs the
 * same whether it talks to an upstream directly or through the gateway (the SDK's Client would spend more CPU on
 * validation than the gateway does on relaying). Each session is a real MCP session: `initialize`, then
 * `notifications/initialized`, then a closed loop of `tools/call`, each answer checked.
 */

/** Where a session's requests go: the MCP endpoint, extra headers (the bearer token), and the tool to call. */
export interface McpTarget {
  label: string;
  url: string;
  headers: Record<string, string>;
  tool: string;
  /** What the tool answers for `text`, to check every answer. */
  expected: (text: string) => string;
}

export interface LoadSample {
  /** Latency of each request that started inside the measured window, in ms. */
  latencies: number[];
  /** Requests answered inside the window (the throughput's numerator). */
  completed: number;
  errors: number;
  firstError?: string;
  seconds: number;
}

interface JsonRpcAnswer {
  id?: unknown;
  result?: Record<string, unknown>;
  error?: { code: number; message: string };
}

interface OpenSession {
  sessionId: string;
  protocolVersion: string;
}

const ACCEPT = 'application/json, text/event-stream';

/** The answer with `id` from a JSON body or an SSE body (events named `message` or unnamed, one data line each). */
function answerOf(contentType: string, text: string, id: number): JsonRpcAnswer {
  if (contentType.startsWith('application/json')) return JSON.parse(text) as JsonRpcAnswer;
  if (!contentType.startsWith('text/event-stream')) throw new Error(`unexpected content type ${contentType}`);
  for (const line of text.split('\n')) {
    if (!line.startsWith('data:')) continue;
    const message = JSON.parse(line.slice(5)) as JsonRpcAnswer;
    if (message.id === id) return message;
  }
  throw new Error('the stream ended without an answer');
}

interface Reply {
  status: number;
  contentType: string;
  sessionId: string;
  text: string;
}

/** Collects one response (undici's handler interface): status, the two headers the client reads, the body as text. */
class ReplyHandler implements Dispatcher.DispatchHandler {
  private status = 0;
  private contentType = '';
  private sessionId = '';
  private readonly chunks: Buffer[] = [];

  constructor(
    private readonly resolve: (reply: Reply) => void,
    private readonly reject: (error: Error) => void,
  ) {}

  /** Marks the handler as undici's current interface (without it undici takes it for the deprecated one). */
  onRequestStart(): void {}

  onResponseStart(_controller: Dispatcher.DispatchController, statusCode: number, headers: Record<string, string | string[] | undefined>): void {
    this.status = statusCode;
    this.contentType = String(headers['content-type'] ?? '');
    this.sessionId = String(headers['mcp-session-id'] ?? '');
  }

  onResponseData(_controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.chunks.push(chunk);
  }

  onResponseEnd(): void {
    const text = this.chunks.length === 1 ? this.chunks[0]!.toString('utf8') : Buffer.concat(this.chunks).toString('utf8');
    this.resolve({ status: this.status, contentType: this.contentType, sessionId: this.sessionId, text });
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    this.reject(error);
  }
}

export class McpLoadClient {
  private readonly pool: Pool;
  private readonly path: string;
  private nextId = 1;

  constructor(
    private readonly target: McpTarget,
    connections: number,
  ) {
    const url = new URL(target.url);
    this.path = url.pathname;
    this.pool = new Pool(url.origin, { connections, pipelining: 1, keepAliveTimeout: 60_000 });
  }

  private headers(session?: OpenSession): Record<string, string> {
    return {
      ...this.target.headers,
      accept: ACCEPT,
      'content-type': 'application/json',
      ...(session ? { 'mcp-session-id': session.sessionId, 'mcp-protocol-version': session.protocolVersion } : {}),
    };
  }

  /**
   * One request through undici's dispatch API with a plain handler: no response stream or promise per request, the
   * cheapest way undici offers, so the load generator takes as little of the machine's CPU from the processes it
   * measures as it can (request() with body.text() cost it about 0.22 ms per call, as much as a third of the upstream).
   */
  private send(method: 'POST' | 'DELETE', headers: Record<string, string>, body?: string): Promise<Reply> {
    return new Promise((resolve, reject) => {
      this.pool.dispatch({ path: this.path, method, headers, ...(body !== undefined ? { body } : {}) }, new ReplyHandler(resolve, reject));
    });
  }

  private post(body: unknown, session?: OpenSession): Promise<Reply> {
    return this.send('POST', this.headers(session), JSON.stringify(body));
  }

  /** `initialize` and `notifications/initialized`, as any MCP client does once per session. */
  async open(): Promise<OpenSession> {
    const id = this.nextId++;
    const initialize = await this.post({
      jsonrpc: '2.0',
      id,
      method: 'initialize',
      params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'mcp-bench', version: '1.0.0' } },
    });
    if (initialize.status !== 200 || !initialize.sessionId) throw new Error(`${this.target.label}: initialize answered ${initialize.status} ${initialize.text.slice(0, 300)}`);
    const answer = answerOf(initialize.contentType, initialize.text, id);
    if (!answer.result) throw new Error(`${this.target.label}: initialize failed: ${JSON.stringify(answer.error)}`);
    const session = { sessionId: initialize.sessionId, protocolVersion: String(answer.result.protocolVersion) };
    const initialized = await this.post({ jsonrpc: '2.0', method: 'notifications/initialized' }, session);
    if (initialized.status !== 202) throw new Error(`${this.target.label}: notifications/initialized answered ${initialized.status}`);
    return session;
  }

  /** Any request of the session; the answer's result, or an error thrown. */
  async request(session: OpenSession, method: string, params: Record<string, unknown>): Promise<Record<string, unknown>> {
    const id = this.nextId++;
    const reply = await this.post({ jsonrpc: '2.0', id, method, params }, session);
    if (reply.status !== 200) throw new Error(`${method} answered HTTP ${reply.status} ${reply.text.slice(0, 300)}`);
    const answer = answerOf(reply.contentType, reply.text, id);
    if (!answer.result) throw new Error(`${method} failed: ${JSON.stringify(answer.error)}`);
    return answer.result;
  }

  /** One `tools/call` of the target's tool, its answer checked. */
  async call(session: OpenSession, text: string): Promise<void> {
    const result = await this.request(session, 'tools/call', { name: this.target.tool, arguments: { text } });
    const content = (result.content as { text?: string }[] | undefined)?.[0]?.text;
    if (result.isError === true || content !== this.target.expected(text)) throw new Error(`unexpected tool result ${JSON.stringify(result).slice(0, 300)}`);
  }

  async close(session: OpenSession): Promise<void> {
    await this.send('DELETE', this.headers(session));
  }

  async destroy(): Promise<void> {
    await this.pool.close();
  }
}

/** Longest a failing run keeps going: a broken set-up should stop the benchmark, not spin. */
const MAX_ERRORS = 100;

/**
 * `sessions` MCP sessions, each calling the tool in a closed loop (the next call when the answer arrived):
 * `warmupSeconds` unmeasured, then `seconds` measured. The sessions are opened before and ended after the clock.
 * `onWindow` hears when the measured window starts and ends (to read CPU counters).
 */
export async function closedLoop(
  target: McpTarget,
  sessions: number,
  seconds: number,
  warmupSeconds: number,
  onWindow: (edge: 'start' | 'end') => void = () => undefined,
): Promise<LoadSample> {
  const client = new McpLoadClient(target, sessions);
  const timers: NodeJS.Timeout[] = [];
  try {
    const opened = await Promise.all(Array.from({ length: sessions }, () => client.open()));
    const sample: LoadSample = { latencies: [], completed: 0, errors: 0, seconds };
    const measureFrom = process.hrtime.bigint() + BigInt(Math.round(warmupSeconds * 1e9));
    const until = measureFrom + BigInt(Math.round(seconds * 1e9));
    const signalled = new Set<'start' | 'end'>();
    const signal = (edge: 'start' | 'end') => {
      if (signalled.has(edge)) return;
      signalled.add(edge);
      onWindow(edge);
    };
    timers.push(setTimeout(() => signal('start'), warmupSeconds * 1000));
    timers.push(setTimeout(() => signal('end'), (warmupSeconds + seconds) * 1000));
    await Promise.all(
      opened.map(async (session, index) => {
        for (let n = 0; ; n++) {
          const started = process.hrtime.bigint();
          if (started >= until) return;
          try {
            await client.call(session, `s${index}-${n}`);
            const ended = process.hrtime.bigint();
            if (started >= measureFrom) sample.latencies.push(Number(ended - started) / 1e6);
            if (ended >= measureFrom && ended < until) sample.completed += 1;
          } catch (error) {
            sample.errors += 1;
            sample.firstError ??= error instanceof Error ? error.message : String(error);
            if (sample.errors >= MAX_ERRORS) throw new Error(`${target.label}: too many failed calls; first: ${sample.firstError}`, { cause: error });
          }
        }
      }),
    );
    signal('start');
    signal('end');
    await Promise.all(opened.map((session) => client.close(session)));
    return sample;
  } finally {
    for (const timer of timers) clearTimeout(timer);
    await client.destroy();
  }
}
